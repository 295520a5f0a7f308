/**
 * A typed client of the Deployment Platform API: openapi-fetch over the types generated from
 * `/openapi.json` (src/schema.d.ts, `npm run generate`), plus what a careful caller adds:
 *  - 429 and 5xx answers, and requests that got no answer, are retried (bounded attempts),
 *    waiting `Retry-After` when the server says so, else a jittered exponential back-off;
 *  - every POST, PUT, PATCH and DELETE carries an `Idempotency-Key` (a random UUID unless the
 *    caller set one), the same on each of its retries, so a retried write executes once; a
 *    `409` with `Retry-After` (that key's first attempt is still executing, API_CONTRACT §11) is
 *    retried too, to get that attempt's answer;
 *  - a `304 Not Modified` (a GET sent with `If-None-Match`) comes back as `{ data: undefined,
 *    error: undefined, response }`: check `response.status === 304` before reading `data`;
 *  - `pages()` walks a keyset-paginated list (`after` ← `next_page`);
 *  - `follow()` streams a deployment's timeline and `waitForDeployment()` waits for its end;
 *    `exportVariables()` and `applyVariableChanges()` handle a scope's variables as one set.
 */
export {
  type ClientOptions,
  createDeployClient,
  type DeployClient,
  exchangeOidcToken,
  type IssuedApiKey,
  type OidcExchangeBody,
  type OidcExchangeOptions,
} from "./client.js";
export {
  ApiError,
  type ApiErrorBody,
  NO_ERROR_BODY,
  type NoErrorBody,
  unwrap,
  unwrapData,
} from "./errors.js";
export { type FollowEvent, type FollowOptions, follow, StreamError } from "./follow.js";
export { pages } from "./pages.js";
export {
  backoffMs,
  type RetryInfo,
  type RetryOptions,
  retryAfterMs,
  retryDelayMs,
  retryingFetch,
} from "./retry.js";
export type { components, paths } from "./schema.js";
export { readSse, type SseEvent, type SseHandlers } from "./sse.js";
export * from "./types.js";
export {
  applyVariableChanges,
  exportVariables,
  restoreVariableVersion,
  type VariableScope,
} from "./variables.js";
export { type WaitOptions, type WaitResult, waitForDeployment } from "./wait.js";
