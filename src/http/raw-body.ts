/**
 * The request's raw body, read once and bounded (API_CONTRACT §6: at most 1 MiB; and in time), by
 * whichever needs it first: the Idempotency-Key claim, which hashes it before anything else runs
 * (src/idempotency/claim.ts), or else the body guard (src/middleware/body-guard.ts).
 */
import type { Context } from "hono";
import { ApiError, badInput } from "../errors";
import type { AppEnv } from "./app-env";

/** `application/json`, with or without parameters: the one type a request body may have (API_CONTRACT §6). */
export const JSON_CONTENT_TYPE = /^application\/json\s*(;.*)?$/i;

/**
 * A body refused for its type: `400 bad_input`, its cause the `content-type` header and what it
 * said instead, whether the body guard refuses it (a body that came) or the operation's validator
 * (an empty body where one is required: src/http/error-handler.ts).
 */
export const notJsonBody = (contentType: string | undefined) =>
  badInput("Request bodies must be JSON, sent with `content-type: application/json`.", [
    { path: "header.content-type", message: `Expected application/json, got ${contentType || "nothing"}.` },
  ]);

/** A request body is at most 1 MiB (API_CONTRACT §6). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The request's raw body, at most MAX_BODY_BYTES (else `400 bad_input`), arrived whole within the
 * configured time (`config.bodyTimeoutMs`, else `408 timeout`), read once per request: a second
 * caller gets the same bytes (or the same failure).
 */
export function readRawBody(c: Context<AppEnv>): Promise<Uint8Array> {
  let pending = c.get("rawBody");
  if (!pending) {
    const stream = c.req.raw.body;
    const declared = Number(c.req.header("content-length") ?? "0");
    pending =
      declared > MAX_BODY_BYTES
        ? Promise.reject(tooLarge())
        : stream
          ? readLimited(stream, MAX_BODY_BYTES, c.get("ctx").config.bodyTimeoutMs)
          : Promise.resolve(new Uint8Array(0));
    // A failure is reported by whoever awaits it; this copy only keeps it from going unhandled.
    pending.catch(() => undefined);
    c.set("rawBody", pending);
  }
  return pending;
}

const tooLarge = () => badInput(`The request body exceeds ${MAX_BODY_BYTES} bytes.`);

const timedOut = (ms: number) =>
  new ApiError("timeout", `The request body did not arrive whole within ${ms / 1000} s; send it again.`);

/** The client went away, or its connection broke, mid-body: nobody reads the answer, but it is no 500. */
const cutShort = () => badInput("The request body ended before it was complete (the connection was lost).");

const EXPIRED = Symbol("expired");

/**
 * Reads the body to its end, within `timeoutMs` from the first read. A body over `limit` is
 * refused, but still read to its end (within the same time), its bytes dropped: a server that
 * stops reading a body mid-upload leaves the connection that carries it unusable (`wrangler dev`
 * then answers a plain-text `503 "Your worker restarted mid-request"` in place of the `400`).
 * Only a body that has not ended in time is cut off: `408 timeout`, or the `400` of a body
 * already over the limit. A trickle of bytes therefore holds a request for `timeoutMs` at most.
 */
async function readLimited(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<typeof EXPIRED>((resolve) => {
    timer = setTimeout(() => resolve(EXPIRED), timeoutMs);
  });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const read = reader.read();
      // A read still pending when time runs out ends with the cancel below, or fails: handled here.
      read.catch(() => undefined);
      const next = await Promise.race([read, expired]);
      if (next === EXPIRED) {
        reader.cancel().catch(() => undefined);
        throw total > limit ? tooLarge() : timedOut(timeoutMs);
      }
      if (next.done) break;
      total += next.value.byteLength;
      if (total <= limit) chunks.push(next.value);
      else chunks.length = 0;
    }
  } catch (err) {
    throw err instanceof ApiError ? err : cutShort();
  } finally {
    clearTimeout(timer);
  }
  if (total > limit) throw tooLarge();
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
