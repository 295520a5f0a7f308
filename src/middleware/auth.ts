import { createMiddleware } from "hono/factory";
import type { Caller } from "../context";
import { ApiError, isOrganizationMoved } from "../errors";
import type { AppEnv } from "../http/app-env";
import { isKeylessRequest } from "../http/keyless";
import { authenticate, forgetOrganization } from "../services/api-keys/authenticate";
import { setCaller } from "./context";
import { refuseAnonymous } from "./rate-limit";

/**
 * x-api-key → the caller (its identity and `recheckAccess`), added to the request's service
 * context; the key itself goes no further. A request that fails authentication is counted by the
 * rate limiter (`refuseAnonymous`) before its 401. A keyless operation (src/http/keyless.ts) passes
 * without a caller.
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  // The token exchange (API_CONTRACT §27) authenticates with the token in its body, not a key.
  if (isKeylessRequest(c)) return next();
  let caller: Caller;
  try {
    caller = await authenticate(c.get("ctx"), c.req.header("x-api-key"));
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "unauthenticated") throw err;
    return refuseAnonymous(c, err);
  }
  setCaller(c, caller);
  await next();
  // A write its organization's move refused (API_CONTRACT §32): the organization's keys are
  // looked up again, so the retry goes to the database that holds it now.
  if (c.error && isOrganizationMoved(c.error)) forgetOrganization(caller.identity.orgId);
});

/**
 * Bearer ADMIN_TOKEN for /internal/v1 (API_CONTRACT §9); every path 404s when no token is configured.
 * A wrong or missing token counts against the `anonymous` window of its client, exactly as a /v1
 * request without a valid key does (API_CONTRACT §28: the internal API counts failed logins), so
 * the admin token cannot be guessed faster than an API key. A right one is neither counted nor
 * limited: the engine and the dashboard call with it.
 */
export const adminAuth = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  if (!expected) throw new ApiError("not_found", "Not found.");
  // The auth scheme is case-insensitive (RFC 9110 §11.1).
  const presented = /^bearer +(\S+) *$/i.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  if (!(await timingSafeEqual(presented, expected))) {
    return refuseAnonymous(c, new ApiError("unauthenticated", "A valid admin bearer token is required."));
  }
  await next();
});

async function timingSafeEqual(a: string, b: string): Promise<boolean> {
  // Compare digests so neither the length nor the content leaks through timing.
  const enc = new TextEncoder();
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", enc.encode(a)),
    crypto.subtle.digest("SHA-256", enc.encode(b)),
  ]);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0 && a.length > 0;
}
