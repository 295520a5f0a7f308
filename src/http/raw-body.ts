/**
 * The request's raw body, read once and bounded (API_CONTRACT §6: at most 1 MiB), by whichever
 * needs it first: the Idempotency-Key claim, which hashes it before anything else runs
 * (src/idempotency/claim.ts), or else the body guard (src/middleware/body-guard.ts).
 */
import type { Context } from "hono";
import { badInput } from "../errors";
import type { AppEnv } from "./app-env";

/** A request body is at most 1 MiB (API_CONTRACT §6). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The request's raw body, at most MAX_BODY_BYTES (else `400 bad_input`), read once per
 * request: a second caller gets the same bytes (or the same failure).
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
          ? readLimited(stream, MAX_BODY_BYTES)
          : Promise.resolve(new Uint8Array(0));
    // A failure is reported by whoever awaits it; this copy only keeps it from going unhandled.
    pending.catch(() => undefined);
    c.set("rawBody", pending);
  }
  return pending;
}

const tooLarge = () => badInput(`The request body exceeds ${MAX_BODY_BYTES} bytes.`);

/**
 * How much of a refused body, past the limit, is read and dropped before the stream is cancelled.
 * Cancelling a body mid-upload leaves the connection it came on unusable (under `wrangler dev`
 * the next request on it gets a plain-text `503 "Your worker restarted mid-request"`). So, as an
 * HTTP server drains a body it refuses so that its connection can carry the next request, a
 * body a little over the limit is read to its end; an endless one is still cut off.
 */
export const DRAIN_BYTES = 8 * MAX_BODY_BYTES;

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let left = budget;
  while (left >= 0) {
    const { done, value } = await reader.read();
    if (done) return;
    left -= value.byteLength;
  }
  await reader.cancel();
}

async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await drain(reader, DRAIN_BYTES);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
