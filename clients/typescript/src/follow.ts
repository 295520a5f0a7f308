/**
 * `follow()`: a deployment's timeline (API_CONTRACT §19) as it happens, over Server-Sent Events.
 * A dropped connection is resumed with `Last-Event-ID` (the last `seq` seen), and an entry whose
 * `seq` was already yielded is skipped, so a caller sees each entry once and in order, across any
 * number of reconnections, until `end` brings the final deployment record.
 */
import type { DeployClient } from "./client.js";
import { ApiError } from "./errors.js";
import { backoffMs, defaultSleep } from "./retry.js";
import { readSse } from "./sse.js";
import type { Deployment, TimelineEntry } from "./types.js";

/** The stream kept failing: `maxReconnects` connections in a row brought nothing. */
export class StreamError extends Error {
  override name = "StreamError";
}

export type FollowEvent = { type: "entry"; entry: TimelineEntry } | { type: "end"; deployment: Deployment };

export type FollowOptions = {
  /** Start after this `seq` (default 0: the whole timeline). */
  afterSeq?: number;
  /** Stops the stream (the generator then throws the signal's reason). */
  signal?: AbortSignal;
  /** Reconnections in a row that bring nothing before giving up (default 8). */
  maxReconnects?: number;
  /** Upper bound of one wait between reconnections, in ms (default 30 000). */
  maxDelayMs?: number;
  /** Called before each reconnection, with the `seq` it resumes after. */
  onReconnect?: (info: { afterSeq: number; attempt: number; delayMs: number; error?: unknown }) => void;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
};

export async function* follow(
  client: DeployClient,
  deploymentId: string,
  options: FollowOptions = {},
): AsyncGenerator<FollowEvent, void, undefined> {
  const { signal } = options;
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const maxReconnects = options.maxReconnects ?? 8;
  let last = options.afterSeq ?? 0;
  let failures = 0;
  let serverRetryMs: number | null = null;
  for (;;) {
    let error: unknown;
    let progressed = false;
    const opened = now();
    try {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (last > 0) headers["last-event-id"] = String(last);
      const result = await client.GET("/v1/deployments/{id}/timeline", {
        params: { path: { id: deploymentId } },
        headers,
        parseAs: "stream",
        signal,
      });
      if (!result.response.ok || !result.data) {
        // 4xx will not change by asking again; 5xx and 429 were retried by the client already.
        throw ApiError.from(result);
      }
      const type = result.response.headers.get("content-type") ?? "";
      if (!type.startsWith("text/event-stream")) {
        await result.data.cancel();
        throw new StreamError(
          `the timeline of ${deploymentId} came as ${type || "no type"}, not an event stream`,
        );
      }
      const events = readSse(result.data, {
        onRetry: (ms) => {
          serverRetryMs = ms;
        },
      });
      for await (const message of events) {
        progressed = true;
        if (message.event === "end") {
          yield { type: "end", deployment: JSON.parse(message.data) as Deployment };
          return;
        }
        if (message.event !== "status" && message.event !== "log") continue;
        const entry = JSON.parse(message.data) as TimelineEntry;
        if (entry.seq <= last) continue;
        last = entry.seq;
        yield { type: "entry", entry };
      }
    } catch (err) {
      if (
        signal?.aborted ||
        err instanceof ApiError ||
        err instanceof StreamError ||
        err instanceof SyntaxError
      )
        throw err;
      error = err;
    }
    // The stream ended without `end`: dropped, or closed at the server's time limit. Resume at
    // once after a stream that brought an entry or stayed open a while (keep-alives); back off
    // after one that brought nothing.
    if (now() - opened >= 10_000) progressed = true;
    failures = progressed ? 0 : failures + 1;
    if (failures > maxReconnects) {
      throw new StreamError(`the timeline stream of ${deploymentId} failed ${failures} times in a row`, {
        cause: error,
      });
    }
    const backoff =
      failures === 0 ? 0 : backoffMs(null, failures, options.maxDelayMs ?? 30_000, options.random);
    const delayMs = Math.max(serverRetryMs ?? 0, backoff);
    options.onReconnect?.({ afterSeq: last, attempt: failures, delayMs, error });
    if (delayMs > 0) await sleep(delayMs, signal);
  }
}
