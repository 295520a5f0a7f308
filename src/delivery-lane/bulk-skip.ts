/**
 * A delivery lane's (./object.ts) skipping of its integration's backlog once an attempt found the
 * integration disabled: what is due (not in flight, not asked for by an operator, not out of
 * tries) is skipped SKIP_CHUNK at a time, one D1 statement each (src/services/integrations/attempts.ts
 * `skipDisabled`), instead of an attempt each: two round trips each, with nothing between them,
 * and thousands of them held up every other organization on the primary. A chunk is of one
 * database, on its primary. Whatever a statement did not skip (the integration enabled again, a
 * newer series, a move) goes through its own attempt.
 */
import { createServiceContext } from "../context";
import { DIRECTORY } from "../db/databases";
import { PRIMARY } from "../db/session";
import { loggableError } from "../errors";
import { newId } from "../lib/ids";
import { SKIP_CHUNK, skipDisabled } from "../services/integrations/attempts";
import { MAX_ATTEMPTS } from "../webhooks/retry";
import { dropEntry, dueEntries } from "./storage";

/**
 * Skips what is due in bulk; whether to go on doing so: false once a statement skipped less than it
 * was given, or failed (then skipping in bulk waits for an attempt to find the integration disabled
 * again), true when nothing is due now.
 */
export async function skipDueInBulk(
  sql: SqlStorage,
  env: Env,
  inFlight: ReadonlyMap<string, unknown>,
): Promise<boolean> {
  for (;;) {
    const due = dueEntries(sql, SKIP_CHUNK, inFlight, Date.now()).filter(
      (row) => row.manual === 0 && row.tries < MAX_ATTEMPTS,
    );
    const database = due[0]?.database ?? DIRECTORY;
    const chunk = due.filter((row) => (row.database ?? DIRECTORY) === database);
    if (chunk.length === 0) return true;
    const ctx = createServiceContext({ env, requestId: newId(), session: PRIMARY, database });
    let skipped: Set<string>;
    try {
      skipped = new Set(
        await skipDisabled(
          ctx,
          chunk.map((row) => ({ deliveryId: row.delivery_id, series: row.series })),
        ),
      );
    } catch (err) {
      ctx.log.error("bulk skip failed", { error: loggableError(err) });
      return false;
    }
    for (const row of chunk) if (skipped.has(row.delivery_id)) dropEntry(sql, row);
    if (skipped.size < chunk.length) return false;
  }
}
