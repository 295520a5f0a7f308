import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
import { LIVE_STREAMS_PER_FAMILY, RATE_LIMIT_WINDOW_SECONDS, type RateLimitPolicy } from "../config";
import type { Identity } from "../context";
import { ApiError, loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { isKeylessRequest } from "../http/keyless";
import type { RouteLookup } from "../http/operations";
import { readRawBody } from "../http/raw-body";
import { acceptsEventStream } from "../http/sse";
import { holdClaim, idempotencyClaim } from "../idempotency/claim";
import type { ClaimOutcome, IdempotencyClaim } from "../idempotency/store";
import { sha256Hex } from "../lib/hex";
import { unverifiedExp } from "../lib/id-token";
import { newId } from "../lib/ids";
import { anonymousClient } from "../lib/ip-address";
import { writeFirstUse } from "../rate-limit/key-use";
import type { AdmitResult, SettleRequest } from "../rate-limit/limiter";
import type { StreamLeaseRequest } from "../rate-limit/stream-leases";
import { StreamPlace } from "../rate-limit/stream-place";
import type { WindowDecision } from "../rate-limit/window";
import { ownLimiter } from "../services/api-keys/authenticate";

export type LimitOutcome = {
  allowed: boolean;
  headers: Record<string, string>;
  /** The latest D1 bookmark of the subject's writes, as its limiter object keeps it. */
  bookmark?: string;
  /** The claim's outcome, when one was asked for and the request was admitted. */
  idempotency?: ClaimOutcome;
  /** The same object's second call, for a request that claimed a key. */
  settle: (request: SettleRequest) => Promise<void>;
  /** The request is to write its key's `last_used_at` (the first use in a while). */
  writeUse?: true;
  /** The live stream's place among its family's, when one was asked for and granted. */
  streamPlace?: StreamPlace;
  /** Refused: the family holds every place for live streams (API_CONTRACT §33). */
  streamsFull?: true;
};

/**
 * The limiter object of a subject (`key:<api key id>` of a key family's root, `trust:<trust id>`
 * for the keys an OpenID Connect trust issued, or `ip:<client>`); no I/O.
 */
export function limiterOf(c: Context<AppEnv>, subject: string) {
  return c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(subject));
}

/**
 * One Durable Object call: count this request against `policy` for `subject`
 * (`key:<api key id>` or `ip:<client>`, an IPv4 address or an IPv6 /64).
 *
 * Fail open: if the limiter cannot be reached or throws, the request is served without
 * rate-limit headers, and the failure is logged. Rate limiting protects capacity; it is
 * not an access control (authentication and authorization are enforced in full either
 * way), and the limiter is a single object per key, so a limiter outage (a deploy
 * resetting objects, an overloaded or unreachable object) must not become an outage of
 * the whole API. The cost is that, during the outage, a client can exceed its quota;
 * D1 and the Worker's own limits still bound what it can do. Failing closed would turn
 * every such blip into 5xx or 429 for every customer at once.
 */
export async function countRequest(
  c: Context<AppEnv>,
  subject: string,
  policy: RateLimitPolicy,
  idempotency?: IdempotencyClaim,
  usedKey?: { id: string; database: string },
  stream?: StreamLeaseRequest,
): Promise<LimitOutcome> {
  const limit = c.get("ctx").config.rateLimits[policy];
  const stub = limiterOf(c, subject);
  const settle = async (request: SettleRequest) => {
    await stub.settle(request);
  };
  let result: AdmitResult;
  try {
    result = await stub.admit({
      policy,
      limit,
      windowSeconds: RATE_LIMIT_WINDOW_SECONDS,
      ...(idempotency ? { idempotency } : {}),
      ...(usedKey !== undefined ? { usedKey } : {}),
      ...(stream ? { stream } : {}),
    });
  } catch (err) {
    c.get("ctx").log.error("rate limiter unavailable; failing open", { policy, error: loggableError(err) });
    return { allowed: true, headers: {}, settle };
  }
  const { decision, bookmark } = result;
  const outcome: LimitOutcome = {
    allowed: decision.allowed,
    headers: rateLimitHeaders(policy, decision),
    settle,
  };
  if (stream && result.stream?.admitted === false) {
    // API_CONTRACT §33: no place for another live stream; not counted against the window (§7).
    const retryAfter = Math.max(result.stream.retryAfter, decision.allowed ? 0 : decision.reset);
    const headers = { ...outcome.headers, "Retry-After": String(retryAfter) };
    return { ...outcome, allowed: false, streamsFull: true, headers };
  }
  if (stream && result.stream?.admitted) {
    const ctx = c.get("ctx");
    outcome.streamPlace = new StreamPlace(stub, stream, ctx.log, ctx.waitUntil);
  }
  if (bookmark !== undefined) outcome.bookmark = bookmark;
  if (result.idempotency) outcome.idempotency = result.idempotency;
  if (result.writeUse) outcome.writeUse = true;
  return outcome;
}

export function rateLimitHeaders(policy: RateLimitPolicy, d: WindowDecision): Record<string, string> {
  const headers: Record<string, string> = {
    "X-Ratelimit-Limit": String(d.limit),
    "X-Ratelimit-Remaining": String(d.remaining),
    "X-Ratelimit-Reset": String(d.reset),
    "RateLimit-Policy": `"${policy}";q=${d.limit};w=${RATE_LIMIT_WINDOW_SECONDS}`,
    RateLimit: `"${policy}";r=${d.remaining};t=${d.reset}`,
  };
  if (!d.allowed) headers["Retry-After"] = String(Math.max(1, d.reset));
  return headers;
}

export const rateLimited = (
  headers: Record<string, string>,
  message = "Rate limit exceeded; retry after the number of seconds in Retry-After.",
) => new ApiError("rate", message, undefined, headers);

/** The refusal of a live stream for which its key family has no place (API_CONTRACT §33). */
const STREAMS_FULL =
  `This key family already holds ${LIVE_STREAMS_PER_FAMILY} live streams open; one must end first. ` +
  "Retry after the number of seconds in Retry-After.";

/**
 * A request that failed authentication counts against the `anonymous` policy of its client
 * (an IPv4 address, or an IPv6 /64: `anonymousClient`), so key guessing is throttled: it answers
 * its 401 with the rate-limit headers, or 429 once that client is over its limit.
 */
export async function refuseAnonymous(c: Context<AppEnv>, refusal: ApiError): Promise<never> {
  const client = anonymousClient(c.req.header("cf-connecting-ip") ?? "unknown");
  const outcome = await countRequest(c, `ip:${client}`, "anonymous");
  if (!outcome.allowed) throw rateLimited(outcome.headers);
  throw new ApiError(refusal.code, refusal.message, undefined, outcome.headers);
}

/**
 * A keyless operation (src/http/keyless.ts; API_CONTRACT §27, the token exchange): every request,
 * answered or refused, counts against its route's policy per client address, counted like
 * `anonymous` (an IPv4 address, an IPv6 /64), with the rate-limit headers on every answer. It
 * takes no key: one sent anyway is `400 bad_input` (after it is counted), never read.
 *
 * Its Idempotency-Key (§11, which part four's preamble applies to every operation) is the
 * credential's own, as every other request's is its API key's: here that is the ID token in the
 * body, while it is unexpired. The claim is kept in the client address's object under the token's
 * hash (two CI runs behind one address that send the same key never meet), and the answer, which
 * holds the new API key, sealed with the token. A retry from the same address, with the same key
 * and body, of an exchange whose answer it did not receive gets that answer, until the token's
 * `exp`: a spent token is worth no more than its lifetime. A 401 (the token refused) is not kept
 * (../idempotency/middleware.ts), so a mended retry runs. An exchange whose claim was never
 * settled (the Worker died after its commit) runs again on a retry and meets its `jti`, spent: a
 * 401; a token is exchanged once.
 */
async function limitKeyless(c: Context<AppEnv>, policy: RateLimitPolicy, next: Next): Promise<void> {
  const client = anonymousClient(c.req.header("cf-connecting-ip") ?? "unknown");
  const keyed = c.req.header("x-api-key") !== undefined;
  const claim = keyed ? undefined : await idempotencyClaim(c);
  const token = claim && (await tokenOf(c));
  const stored =
    claim && token !== undefined ? { ...claim, key: `${await sha256Hex(token)} ${claim.key}` } : undefined;
  const outcome = await countRequest(c, `ip:${client}`, policy, stored);
  if (!outcome.allowed) throw rateLimited(outcome.headers);
  if (keyed) {
    throw new ApiError(
      "bad_input",
      "This operation takes no API key: the token in the body authenticates. Send no x-api-key header.",
      [{ path: "header.x-api-key", message: "Not taken by this operation." }],
      outcome.headers,
    );
  }
  if (claim && stored && token !== undefined) {
    await holdClaim(
      c,
      claim,
      outcome.idempotency,
      (answer) => outcome.settle({ idempotency: stored, answer }),
      token,
    );
  }
  await next();
  for (const [name, value] of Object.entries(outcome.headers)) c.res.headers.set(name, value);
}

/**
 * The `token` of a keyless request's JSON body, read from the bytes the claim hashed, while its
 * `exp` (read unverified: the exchange verifies it, and a replay needs the very token that was
 * verified, which opens the sealed answer) is in the future. Undefined otherwise (a token over
 * its bound included: nothing more is read of it), and no key is claimed: the body guard or the
 * route refuses such a request.
 */
async function tokenOf(c: Context<AppEnv>): Promise<string | undefined> {
  let token: unknown;
  try {
    token = (JSON.parse(new TextDecoder().decode(await readRawBody(c))) as { token?: unknown } | null)?.token;
  } catch {
    return undefined;
  }
  if (typeof token !== "string") return undefined;
  const exp = unverifiedExp(token);
  return exp !== undefined && exp * 1000 > Date.now() ? token : undefined;
}

/**
 * The claim as the family's object stores it. Idempotency-Keys are the sending key's own (API_CONTRACT
 * §11), and a family shares one object (§28): every key but the one the object is named after
 * stores its claims under its id, joined by a space, which no Idempotency-Key holds (0x21–0x7E),
 * so two keys' claims never meet. The key the object is named after stores them as it always has.
 */
function familyClaim(identity: Identity, claim: IdempotencyClaim): IdempotencyClaim {
  if (identity.limiter === ownLimiter(identity.keyId)) return claim;
  return { ...claim, key: `${identity.keyId} ${claim.key}` };
}

/**
 * The lease a live stream asks its family's object for (API_CONTRACT §33): on a route that answers
 * live streams (`liveStreams`, its declaration), for a request that asks for one (`Accept`).
 */
function liveStreamOf(c: Context<AppEnv>, liveStreams: number | undefined): StreamLeaseRequest | undefined {
  if (liveStreams === undefined || !acceptsEventStream(c.req.header("accept"))) return undefined;
  return { id: newId(), limit: liveStreams, leaseMs: c.get("ctx").config.streamLeaseMs };
}

/**
 * Counts an authenticated /v1 request against the policy its route declares (`default` for a
 * path that matches none), before validation: invalid requests cost work too. Headers go on
 * every response, errors included. The key's latest write bookmark, which the same call
 * returns, is left for the request's D1 session (`keyBookmark`). A write carrying an
 * Idempotency-Key claims it in the same call (src/idempotency/claim.ts); any other request
 * costs that one call.
 */
export function rateLimit(routeMeta: RouteLookup) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const identity = c.get("ctx").identity;
    if (!identity) {
      if (isKeylessRequest(c)) return limitKeyless(c, routeMeta(c)?.policy ?? "anonymous", next);
      throw new Error("rateLimit before authentication");
    }
    const claim = await idempotencyClaim(c);
    const meta = routeMeta(c);
    const policy = meta?.policy ?? "default";
    const stored = claim && familyClaim(identity, claim);
    const stream = liveStreamOf(c, meta?.liveStreams);
    // The key family's object (API_CONTRACT §28); the same call records the key's use (its
    // `last_used_at`, written by the object) and, for a live stream, takes its place (§33).
    const outcome = await countRequest(
      c,
      identity.limiter,
      policy,
      stored,
      { id: identity.keyId, database: identity.database },
      stream,
    );
    if (!outcome.allowed) throw rateLimited(outcome.headers, outcome.streamsFull ? STREAMS_FULL : undefined);
    if (outcome.bookmark !== undefined) c.set("keyBookmark", outcome.bookmark);
    if (outcome.writeUse) writeFirstUse(c.get("ctx"), identity.keyId);
    if (claim && stored) {
      await holdClaim(c, claim, outcome.idempotency, (answer) =>
        outcome.settle({ idempotency: stored, answer }),
      );
    }
    const place = outcome.streamPlace;
    if (place) c.set("streamPlace", place);
    await next();
    // A request that never became a stream (refused: a 400, a 404) gives its place back at once.
    if (place && !place.isHeld) place.release();
    for (const [name, value] of Object.entries(outcome.headers)) c.res.headers.set(name, value);
  });
}
