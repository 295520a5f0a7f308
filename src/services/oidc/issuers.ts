/**
 * An issuer's signing keys (API_CONTRACT §27), found through its discovery document
 * (`<issuer>/.well-known/openid-configuration` → `jwks_uri`, OpenID Connect Discovery §4) and kept
 * per isolate, so that an exchange whose key set is cached makes no request to the issuer.
 *
 * - The key set is fetched on first use and kept 10 minutes. A token whose `kid` it does not hold
 *   refetches it (§27: "an unknown `kid` refetches the keys, at most once a minute per issuer"):
 *   a key rotated in after the set was fetched is picked up by the first token that names it,
 *   and a stream of tokens naming unknown keys costs the issuer one request a minute per isolate.
 *   A set this exchange has just fetched is not fetched again. Each exchange fetches on its own
 *   (no request awaits a fetch another request started: src/lib/once.ts says why). A token's
 *   `jku` and `x5u` headers are never read: the keys come from the issuer's own document only.
 * - The discovery document is kept an hour, one per issuer; its `jwks_uri` must be a URL the
 *   issuer rule allows (./issuer-url.ts), and its `issuer`, when it names one, the trust's
 *   (Discovery §4.3; §27 asks of the document only its `jwks_uri`).
 * - Every request to an issuer ends within FETCH_TIMEOUT_MS (a discovery and a key set: within
 *   10 s together), follows no redirect and reads at most MAX_DOCUMENT_BYTES: an issuer that is
 *   slow, down or answers garbage costs one exchange a `401`, never a `500` and never another
 *   request's time (a Worker awaits its fetches without blocking other requests).
 * - What failed is thrown as an `IssuerFailure` naming the check (./verify.ts answers it).
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { setBounded } from "../../lib/bounded-map";
import { checkIssuerUrl, checkKeySetUrl, discoveryUrl, type IssuerUrlPolicy } from "./issuer-url";

export const FETCH_TIMEOUT_MS = 4_000;
/** How long a discovery document is kept. */
export const DISCOVERY_MAX_AGE_MS = 3600_000;
/** How long a key set is kept before it is fetched again (whatever the tokens name). */
export const KEY_SET_MAX_AGE_MS = 600_000;
/** An unknown `kid` fetches the key set again at most this often per issuer (§27: once a minute). */
export const KEY_SET_COOLDOWN_MS = 60_000;
/** A discovery document or key set larger than this is refused unread (real ones are a few KiB). */
export const MAX_DOCUMENT_BYTES = 256 * 1024;
/** Issuers an isolate keeps (each trust names one; most organizations trust one or two). */
const MAX_ISSUERS = 1_000;

/** A check of the issuer's side that failed: its message names the check and nothing else. */
export class IssuerFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IssuerFailure";
  }
}

type Discovered = { jwksUri: string; keys: JWTVerifyGetKey; until: number };
const issuers = new Map<string, Discovered>();

/** The issuer's key set (jose's key resolver), from the isolate's cache or its discovery document. */
export async function issuerKeys(issuer: string, policy: IssuerUrlPolicy): Promise<JWTVerifyGetKey> {
  const cacheKey = `${policy.allowInsecure ? "insecure" : "secure"} ${issuer}`;
  const now = Date.now();
  const known = issuers.get(cacheKey);
  if (known && known.until > now) return known.keys;
  // A trust is checked when made; checked again here, so that a trust made where insecure issuers
  // were allowed is never fetched over http:// where they are not.
  if (!checkIssuerUrl(issuer, policy).ok) {
    throw new IssuerFailure("The trust's issuer is not a URL an issuer may have here.");
  }
  const jwksUri = await discover(issuer, policy);
  // The same key set as before (and its cache and cooldown) while the document names the same one.
  const keys = known?.jwksUri === jwksUri ? known.keys : remoteKeySet(jwksUri);
  setBounded(issuers, cacheKey, { jwksUri, keys, until: now + DISCOVERY_MAX_AGE_MS }, MAX_ISSUERS);
  return keys;
}

/** Forgets every issuer the isolate keeps (for tests). */
export function forgetIssuers(): void {
  issuers.clear();
}

/**
 * The key resolver of the key set at `jwksUri` (jose's, for `jwtVerify`), kept per isolate: its
 * last fetch (a set kept KEY_SET_MAX_AGE_MS), and when an unknown `kid` last fetched it again.
 * Only values are shared between requests, never a pending fetch. Failures throw jose's errors,
 * which ./verify.ts names: JWKSTimeout, JWKSInvalid (not a JWK set), JWKSNoMatchingKey, and a
 * JOSEError for a set that could not be fetched or read.
 */
function remoteKeySet(jwksUri: string): JWTVerifyGetKey {
  let kept: { keys: JWTVerifyGetKey; fetchedAt: number } | undefined;
  let refetchedAt = Number.NEGATIVE_INFINITY;
  const fetchSet = async () => {
    const fetched = { keys: await fetchKeySet(jwksUri), fetchedAt: Date.now() };
    kept = fetched;
    return fetched.keys;
  };
  return async (header, token) => {
    const fresh = kept && Date.now() - kept.fetchedAt < KEY_SET_MAX_AGE_MS ? kept.keys : undefined;
    const keys = fresh ?? (await fetchSet());
    try {
      return await keys(header, token);
    } catch (err) {
      // A set fetched by this very exchange is as new as any: no second request for it.
      if (!(err instanceof errors.JWKSNoMatchingKey) || !fresh) throw err;
      const now = Date.now();
      if (now - refetchedAt < KEY_SET_COOLDOWN_MS) throw err;
      // Taken before the fetch: exchanges arriving meanwhile do not fetch it too.
      refetchedAt = now;
      return (await fetchSet())(header, token);
    }
  };
}

/** The key set at `jwksUri`, fetched now and read (jose's errors: see `remoteKeySet`). */
async function fetchKeySet(jwksUri: string): Promise<JWTVerifyGetKey> {
  let res: Response;
  try {
    res = await boundedFetch(jwksUri, {
      headers: { accept: "application/json, application/jwk-set+json" },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    if (err instanceof Error && err.name === "TimeoutError") throw new errors.JWKSTimeout();
    throw new errors.JOSEError("The key set could not be fetched.");
  }
  if (res.status !== 200) throw new errors.JOSEError("The key set could not be fetched.");
  let document: unknown;
  try {
    document = await res.json();
  } catch {
    throw new errors.JOSEError("The key set is not JSON.");
  }
  // Refuses what is no JWK set (JWKSInvalid).
  return createLocalJWKSet(document as JSONWebKeySet);
}

/** The `jwks_uri` of the issuer's discovery document, checked. */
async function discover(issuer: string, policy: IssuerUrlPolicy): Promise<string> {
  let res: Response;
  try {
    res = await boundedFetch(discoveryUrl(issuer), {
      headers: { accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    throw new IssuerFailure(
      err instanceof Error && err.name === "TimeoutError"
        ? "The issuer's OpenID configuration did not arrive in time."
        : "The issuer's OpenID configuration could not be fetched.",
    );
  }
  if (res.status !== 200) throw new IssuerFailure("The issuer's OpenID configuration could not be fetched.");
  let document: unknown;
  try {
    document = await res.json();
  } catch {
    throw new IssuerFailure("The issuer's OpenID configuration is not JSON.");
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    throw new IssuerFailure("The issuer's OpenID configuration is not a JSON object.");
  }
  const { issuer: named, jwks_uri: jwksUri } = document as Record<string, unknown>;
  if (named !== undefined && named !== issuer) {
    throw new IssuerFailure("The issuer's OpenID configuration names another issuer.");
  }
  if (typeof jwksUri !== "string" || !checkKeySetUrl(jwksUri, policy).ok) {
    throw new IssuerFailure("The issuer's OpenID configuration has no usable `jwks_uri`.");
  }
  return jwksUri;
}

/**
 * `fetch` that follows no redirect and hands back a body of at most MAX_DOCUMENT_BYTES (a larger
 * one is a failure, read no further): jose's key set reads the body whole.
 */
async function boundedFetch(url: string, init: RequestInit): Promise<Response> {
  const res = await fetch(url, { ...init, redirect: "manual" });
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > MAX_DOCUMENT_BYTES) {
    await res.body?.cancel();
    throw new Error("the issuer's document is too large");
  }
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_DOCUMENT_BYTES) {
      await reader.cancel();
      throw new Error("the issuer's document is too large");
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new Response(res.status === 204 || res.status === 304 ? null : body, {
    status: res.status,
    headers: res.headers,
  });
}
