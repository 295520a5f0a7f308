/**
 * The /v1 operations that take no API key (API_CONTRACT §27: `POST /v1/oidc/token`, where the ID
 * token authenticates). Every other /v1 request is authenticated first (§6). Listed here, by
 * method and path, rather than found from the matched route: authentication runs before the
 * operation is built (src/app.ts), so a request without a key never costs the build of the
 * operation it names; `defineRoute` refuses a `keyless` route that is not listed here, so the two
 * never disagree.
 *
 * Such a request skips the key's middleware and nothing else: it is counted against its route's
 * policy per client address (src/middleware/rate-limit.ts, like `anonymous`), needs no scope, and
 * goes through the body guard, validation, the ETag and the error model like any other.
 */
import type { Context } from "hono";

export const KEYLESS_OPERATIONS: readonly { method: string; path: string }[] = [
  { method: "POST", path: "/v1/oidc/token" },
];

/** Whether `method path` (OpenAPI's spelling, as a route declares it) is a keyless operation. */
export function isKeylessOperation(method: string, path: string): boolean {
  const wanted = method.toUpperCase();
  return KEYLESS_OPERATIONS.some((op) => op.method === wanted && op.path === path);
}

/** Whether the request is for a keyless operation (its paths have no parameters). */
export function isKeylessRequest(c: Context): boolean {
  return isKeylessOperation(c.req.method, c.req.path);
}
