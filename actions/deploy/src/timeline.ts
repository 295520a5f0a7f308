/**
 * Following the deployment to its end: the client's `follow()` (API_CONTRACT §19's live timeline,
 * resumed after a dropped connection without repeating an entry) under a deadline, each entry
 * printed to the step's log, the log lines kept for the summary.
 */
import {
  type DeployClient,
  type Deployment,
  follow,
  isFinal,
  type TimelineEntry,
  unwrapData,
} from "../../../clients/typescript/src/index.js";

export type FollowResult = {
  /** The deployment at the end: final, or as it stood when the time ran out. */
  deployment: Deployment;
  timedOut: boolean;
  /** The timeline's log lines, as lines of text (the last `keep` of `total`). */
  logs: { tail: string[]; total: number };
};

/**
 * Text from the engine, made safe for the step's log: every physical line of it starts with
 * `prefix`, so none can start with `::` and be taken by the runner as a workflow command.
 */
export function prefixed(prefix: string, text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => `${prefix}${line}`)
    .join("\n");
}

/** `10:04:05 stack 7Hq… → failed (reason)` for a status change; the message for a log line. */
export function entryText(e: TimelineEntry): string {
  const who = e.stack_id ? `stack ${e.stack_id}` : "deployment";
  if (e.type === "status") return `${who} → ${e.status}${e.status_reason ? ` (${e.status_reason})` : ""}`;
  return `${e.stack_id ? `[${e.stack_id}] ` : ""}${e.stream === "stderr" ? "! " : ""}${e.message ?? ""}`;
}

export async function followToEnd(
  client: DeployClient,
  id: string,
  options: { timeoutSeconds: number; print: (line: string) => void; keep: number },
): Promise<FollowResult> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error("timeout")),
    // setTimeout's longest delay is 2^31 − 1 ms (~24.8 days); a longer one would fire at once.
    Math.min(Math.max(0, options.timeoutSeconds * 1000), 2 ** 31 - 1),
  );
  const tail: string[] = [];
  let total = 0;
  try {
    for await (const event of follow(client, id, {
      signal: controller.signal,
      onReconnect: ({ afterSeq, delayMs }) =>
        options.print(
          `(connection lost; resuming after entry ${afterSeq} in ${Math.ceil(delayMs / 1000)} s)`,
        ),
    })) {
      if (event.type === "end")
        return { deployment: event.deployment, timedOut: false, logs: { tail, total } };
      const e = event.entry;
      const text = entryText(e);
      options.print(prefixed(`${e.created_at.slice(11, 19)} `, text));
      if (e.type === "log") {
        total++;
        tail.push(`${e.created_at.slice(11, 19)} ${text}`);
        if (tail.length > options.keep) tail.shift();
      }
    }
    throw new Error(`the timeline stream of ${id} ended without its end event`);
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    // Out of time: the deployment as it stands now, which may just have become final.
    const deployment = unwrapData(await client.GET("/v1/deployments/{id}", { params: { path: { id } } }));
    return {
      deployment,
      timedOut: !isFinal(deployment.status),
      logs: { tail, total },
    };
  } finally {
    clearTimeout(timer);
  }
}
