/**
 * CORS for browsers (API_CONTRACT §16) on `/v1/*`, `/openapi.json` and `/docs` (the page and the
 * renderer script it loads): any origin, no credentials. A preflight is answered `204` here,
 * before authentication and rate limiting, so it needs no key and counts against no window. An
 * `OPTIONS` that carries either CORS request header (`Origin`, `Access-Control-Request-Method`)
 * is taken for one, as a client probing the API's CORS by hand expects (the answer reveals
 * nothing); a bare `OPTIONS` is an ordinary request, and without a key it is `401` (SPEC.md: a
 * request with no credentials is rejected). Every other response of these
 * paths (errors, 401 and 429 included) gets `Access-Control-Allow-Origin: *` and exposes the
 * headers a client reads.
 * Mounted only on those paths: `/internal/*` has no CORS at all.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env";

// `/docs/*` is the page and the renderer script it loads (hono matches `/docs` itself too).
export const CORS_PATHS = ["/v1", "/v1/*", "/openapi.json", "/docs/*"] as const;

export const CORS_ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE";
// API_CONTRACT §16, grown by §22: a page sends back the `X-D1-Bookmark` a response carried, and an
// EventSource that reconnects sends `Last-Event-ID`.
export const CORS_ALLOW_HEADERS =
  "x-api-key, content-type, idempotency-key, if-match, if-none-match, x-request-id, x-d1-bookmark, " +
  "last-event-id";
export const CORS_MAX_AGE = "86400";
export const CORS_EXPOSE_HEADERS =
  "x-request-id, etag, location, retry-after, idempotent-replayed, x-ratelimit-limit, " +
  "x-ratelimit-remaining, x-ratelimit-reset, ratelimit, ratelimit-policy, x-d1-bookmark, content-location";

export const cors = createMiddleware<AppEnv>(async (c, next) => {
  if (
    c.req.method === "OPTIONS" &&
    (c.req.header("origin") !== undefined || c.req.header("access-control-request-method") !== undefined)
  ) {
    return c.body(null, 204, {
      "Access-Control-Allow-Origin": "*",
      "Access-Control-Allow-Methods": CORS_ALLOW_METHODS,
      "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
      "Access-Control-Max-Age": CORS_MAX_AGE,
      "Access-Control-Expose-Headers": CORS_EXPOSE_HEADERS,
    });
  }
  await next();
  c.res.headers.set("Access-Control-Allow-Origin", "*");
  c.res.headers.set("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
});
