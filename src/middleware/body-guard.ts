import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { badInput } from "../http/errors";

export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPE = /^application\/json\s*(;.*)?$/i;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * JSON only and at most 1 MiB, checked before anything parses the body. The body is read
 * once here (stopping as soon as it passes the limit) and handed to the validators via
 * Hono's body cache, so it is never read twice.
 */
export const bodyGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (!BODY_METHODS.has(c.req.method) || !c.req.raw.body) return next();

  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();

  const bytes = await readLimited(c.req.raw.body, MAX_BODY_BYTES);
  if (bytes.byteLength === 0) return next();

  const contentType = c.req.header("content-type") ?? "";
  if (!JSON_TYPE.test(contentType)) {
    throw badInput("Request bodies must be JSON, sent with `content-type: application/json`.", [
      { path: "content-type", message: `Expected application/json, got ${contentType || "nothing"}.` },
    ]);
  }
  let text: string;
  let parsed: unknown;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    throw badInput("The request body is not valid JSON.");
  }
  // Hono keeps body promises in this cache (its declared type says otherwise).
  const cache = c.req.bodyCache as unknown as Record<string, Promise<unknown>>;
  cache.json = Promise.resolve(parsed);
  cache.text = Promise.resolve(text);
  return next();
});

const tooLarge = () => badInput(`The request body exceeds ${MAX_BODY_BYTES} bytes.`);

async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
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
