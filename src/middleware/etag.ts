/**
 * Conditional requests (API_CONTRACT §12), once for every /v1 and /internal/v1 route.
 *
 * - Tags every 200/201 JSON answer: a strong ETag (a digest of the body, src/http/etag.ts) for
 *   one record, a weak one for a list (every list answer is the envelope `{"data":[…], …}`,
 *   whose first field is `data`). An answer the route tagged itself keeps its tag (a create
 *   whose body carries a one-time secret tags the record as a GET shows it); an answer marked
 *   `no-store` (a revealed secret) gets none.
 * - A GET whose `If-None-Match` matches the tag (weak comparison, `*` matches any) answers 304
 *   with no body; the outer middlewares add `x-request-id` and the rate-limit headers. The
 *   request still runs: the tag is the digest of the answer it would give.
 * - `If-Match` is parsed here and handed to the services on the context; each write that
 *   honours it checks it in the same statement as the write (src/services/preconditions.ts).
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { badInput } from "../http/errors";
import { type EtagList, etagOf, parseEtagList, weakMatch } from "../http/etag";

const TAGGED_STATUSES = new Set([200, 201]);
const LIST_START = new TextEncoder().encode('{"data":[');

function startsWith(bytes: ArrayBuffer, prefix: Uint8Array): boolean {
  if (bytes.byteLength < prefix.length) return false;
  const head = new Uint8Array(bytes, 0, prefix.length);
  return prefix.every((byte, i) => head[i] === byte);
}

function parseHeader(value: string, name: "if-match" | "if-none-match"): EtagList {
  const list = parseEtagList(value);
  if (!list) {
    throw badInput(
      `${name === "if-match" ? "If-Match" : "If-None-Match"} must be \`*\` or a list of ETags.`,
      [{ path: `header.${name}`, message: 'Expected `*` or entity tags such as `"abc"` or `W/"abc"`.' }],
    );
  }
  return list;
}

export const etag = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  const ifMatch = c.req.header("if-match");
  if (ifMatch !== undefined && method !== "GET" && method !== "HEAD") {
    c.set("ctx", { ...c.get("ctx"), ifMatch: parseHeader(ifMatch, "if-match") });
  }
  const ifNoneMatchHeader = method === "GET" ? c.req.header("if-none-match") : undefined;
  const ifNoneMatch =
    ifNoneMatchHeader === undefined ? undefined : parseHeader(ifNoneMatchHeader, "if-none-match");

  await next();

  const res = c.res;
  if (!TAGGED_STATUSES.has(res.status)) return;
  let tag = res.headers.get("etag");
  if (!tag) {
    if (!/^application\/json/i.test(res.headers.get("content-type") ?? "")) return;
    if (/no-store/i.test(res.headers.get("cache-control") ?? "")) return;
    // The body's bytes as sent; a list's answer starts with the bytes of `{"data":[`.
    const bytes = await res.clone().arrayBuffer();
    tag = await etagOf(bytes, startsWith(bytes, LIST_START));
    res.headers.set("ETag", tag);
  }
  if (ifNoneMatch && res.status === 200 && weakMatch(ifNoneMatch, tag)) {
    c.res = new Response(null, { status: 304, headers: { ETag: tag } });
  }
});
