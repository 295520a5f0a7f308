/**
 * Work whose failure must not become the request's answer, or end a cron run: a consequence of a
 * write that has committed (a hand-off to an object or to the queue, a release, a supersede: a 5xx
 * would say nothing changed, API_CONTRACT §11, and its retry would do the write again), or one item
 * of a cron sweep. Each has a backstop that does later what it leaves undone; the log line says so.
 */
import type { ServiceContext } from "../context";
import { loggableError } from "../errors";

/** `work`'s value; undefined, its failure logged at `error` as `message` with `fields`, when it fails. */
export async function contained<T>(
  ctx: ServiceContext,
  message: string,
  fields: Record<string, unknown>,
  work: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await work();
  } catch (err) {
    ctx.log.error(message, { ...fields, error: loggableError(err) });
    return undefined;
  }
}
