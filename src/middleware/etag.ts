/**
 * Conditional requests (API_CONTRACT §12), once for every /v1 and /internal/v1 route.
 *
 * - Tags every 200/201 JSON answer: a strong ETag (a digest of the body, src/http/etag.ts) for
 *   one record, a weak one for a list (every list answer is the envelope `{"data":[…], …}`,
 *   whose first field is `data`). An answer the route tagged itself keeps its tag (a create
 *   whose body carries a one-time secret tags the record as a GET shows it); an answer marked
 *   `no-store` (a revealed secret) gets none.
 * - The digest is of the JSON text the route's `c.json` serialized, kept as it is made (the
 *   request's `c.json` is wrapped here, the innermost middleware, so it is the text of the very
 *   answer that leaves, and its UTF-8 is the body's bytes): reading the body back would cost
 *   several times the digest. Every route answers JSON through `c.json`;
 *   test/properties/conditional-requests.test.ts walks /openapi.json for the tag on every GET.
 * - A GET or HEAD (hono runs a HEAD as its GET; RFC 9110 §13.1.2) whose `If-None-Match` matches
 *   the tag (weak comparison, `*` matches any) answers 304 with no body; the outer middlewares
 *   add `x-request-id` and the rate-limit headers. The request still runs: the tag is the digest
 *   of the answer it would give.
 * - `If-Match` is handed to the services on the context (src/middleware/context.ts); each write
 *   that honours it checks it in the same statement as the write (src/services/preconditions.ts).
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env";
import { etagListOf, etagOf, weakMatch } from "../http/etag";

const TAGGED_STATUSES = new Set([200, 201]);
const LIST_START = '{"data":[';

/**
 * Makes the request's `c.json` keep the text it serializes: what hono's own `json` does
 * (`JSON.stringify`, then `body` with `Content-Type: application/json` unless the route set one),
 * with the last answer made and its text recorded. Returns the text of `res` if `res` is that answer.
 */
function keepJsonText(c: Context<AppEnv>) {
  let made: { res: Response; text: string } | undefined;
  // hono's `body` takes the same (status or init, headers) as `json`; its overloads do not say so.
  const body = c.body as (
    data: string,
    arg?: unknown,
    headers?: Record<string, string | string[]>,
  ) => Response;
  const json = (object: unknown, arg?: unknown, headers?: Record<string, string | string[]>) => {
    const text = JSON.stringify(object);
    const res = body(text, arg, { "Content-Type": "application/json", ...headers });
    made = { res, text };
    return res;
  };
  c.json = json as unknown as typeof c.json;
  return (res: Response) => (made?.res === res ? made.text : undefined);
}

export const etag = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  const ifNoneMatchHeader = method === "GET" || method === "HEAD" ? c.req.header("if-none-match") : undefined;
  const ifNoneMatch = ifNoneMatchHeader === undefined ? undefined : etagListOf(ifNoneMatchHeader);

  const textOf = keepJsonText(c);

  await next();

  const res = c.res;
  if (!TAGGED_STATUSES.has(res.status)) return;
  let tag = res.headers.get("etag");
  if (!tag) {
    if (!/^application\/json/i.test(res.headers.get("content-type") ?? "")) return;
    if (/no-store/i.test(res.headers.get("cache-control") ?? "")) return;
    const text = textOf(res);
    if (text === undefined) return;
    // A list's answer starts with `{"data":[`.
    tag = await etagOf(text, text.startsWith(LIST_START));
    res.headers.set("ETag", tag);
  }
  if (ifNoneMatch && res.status === 200 && weakMatch(ifNoneMatch, tag)) {
    c.res = new Response(null, { status: 304, headers: { ETag: tag } });
  }
});
