/**
 * An issuer's signing keys (API_CONTRACT §27), found through its discovery document
 * (`<issuer>/.well-known/openid-configuration` → `jwks_uri`, OpenID Connect Discovery §4) and kept
 * per isolate, so that an exchange whose key set is cached makes no request to the issuer.
 *
 * - The key set is jose's `createRemoteJWKSet`: fetched on first use, kept 10 minutes, and
 *   fetched again early only for a `kid` it does not hold, at most once a minute
 *   (`cooldownDuration`): a stream of tokens naming unknown keys costs the issuer one request a
 *   minute per isolate, while a rotated-in key is picked up within a minute. A token's `jku` and
 *   `x5u` headers are never read: the keys come from the issuer's own document only.
 * - The discovery document is kept an hour, one per issuer; its `issuer` must be the trust's
 *   (Discovery §4.3) and its `jwks_uri` a URL the issuer rule allows (./issuer-url.ts).
 * - Every request to an issuer ends within FETCH_TIMEOUT_MS (a discovery and a key set: within
 *   10 s together), follows no redirect and reads at most MAX_DOCUMENT_BYTES: an issuer that is
 *   slow, down or answers garbage costs one exchange a `401`, never a `500` and never another
 *   request's time (a Worker awaits its fetches without blocking other requests).
 * - What failed is thrown as an `IssuerFailure` naming the check (./verify.ts answers it).
 */
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from "jose";
import { setBounded } from "../../lib/bounded-map";
import { checkIssuerUrl, checkKeySetUrl, discoveryUrl, type IssuerUrlPolicy } from "./issuer-url";

export const FETCH_TIMEOUT_MS = 4_000;
/** How long a discovery document is kept (the key set it names is kept by jose: 10 minutes). */
export const DISCOVERY_MAX_AGE_MS = 3600_000;
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
  const keys =
    known?.jwksUri === jwksUri
      ? known.keys
      : createRemoteJWKSet(new URL(jwksUri), {
          cooldownDuration: KEY_SET_COOLDOWN_MS,
          timeoutDuration: FETCH_TIMEOUT_MS,
          headers: { accept: "application/json, application/jwk-set+json" },
          [customFetch]: boundedFetch,
        });
  setBounded(issuers, cacheKey, { jwksUri, keys, until: now + DISCOVERY_MAX_AGE_MS }, MAX_ISSUERS);
  return keys;
}

/** Forgets every issuer the isolate keeps (for tests). */
export function forgetIssuers(): void {
  issuers.clear();
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
  if (named !== issuer) {
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
