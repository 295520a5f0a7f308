/**
 * The checks an ID token passes before a trust exchanges it (API_CONTRACT §27). The JWS itself is
 * jose's to read and verify (no parsing or signature code here); this module says what is allowed
 * and turns every failure into `401 unauthenticated` whose message names the check that failed,
 * and nothing else (not the token, its claims' values, the issuer's answer or the trust's patterns).
 *
 * In order, cheapest first, so a malformed or hostile token never costs a request to the issuer:
 * 1. the form: three base64url parts, a protected header of at most MAX_HEADER_CHARS that is a
 *    JSON object (a header grown huge or deeply nested ends here), `alg` `RS256` or `ES256` (`none`,
 *    `HS256` — an HMAC keyed with the issuer's public key — and every other is refused before any
 *    key is looked at; jose checks `algorithms` again);
 * 2. the signature, by a key of the issuer's own key set (./issuers.ts; the one its `kid` names, or
 *    for a token naming none each key of its `alg` in turn; the token's `jku`, `x5u`,
 *    `jwk` and `x5c` headers are never used), and jose's claim checks: `iss` equal to the trust's
 *    issuer, `aud` equal to or containing its audience, `nbf` at most 60 s ahead, and the presence
 *    of `exp` and `jti`;
 * 3. what jose leaves to its caller: `exp` in the future (jose's tolerance serves `nbf` only),
 *    `iat` (when present) at most 60 s ahead, `exp` at most 24 h after `iat` (after the exchange
 *    for a token without one: no token is taken that lives longer), a non-empty string `jti`, a
 *    string `sub` when present, and every condition met (./conditions.ts).
 * §27 requires `exp` and `jti`; `iat` and `nbf` are checked "when present", and `sub` is recorded
 * "where present" (`oidc.subject` null without it), so neither is required here either.
 */

import {
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  jwtVerify,
} from "jose";
import { ApiError } from "../../errors";
import { TOKEN_MAX_LENGTH } from "../../lib/id-token";
import { unmetCondition } from "./conditions";
import type { IssuerUrlPolicy } from "./issuer-url";
import { IssuerFailure, issuerKeys } from "./issuers";

export const ALGORITHMS = ["RS256", "ES256"];
/** How far in the future `iat` and `nbf` may be (§27). */
export const CLOCK_SKEW_S = 60;
/** The longest a token may live, from `iat` to `exp` (§27). */
export const MAX_TOKEN_LIFETIME_S = 24 * 3600;
/** A protected header longer than this is refused unread (a real one is about 100 characters). */
export const MAX_HEADER_CHARS = 2_048;
/** A `jti` longer than this is refused (a real one is a UUID). */
export const MAX_JTI_CHARS = 1_024;

export const refused = (message: string) => new ApiError("unauthenticated", message);

/** What the exchange needs of a trust. */
export type TrustTerms = { issuer: string; audience: string; conditions: Record<string, string> };

/** A token that passed every check: its claims, with the ones the exchange reads typed. */
export type VerifiedToken = JWTPayload & { sub?: string; jti: string; exp: number; iat?: number };

/** Step 1: the token's form and its `alg`, before anything is looked up. */
export function checkTokenForm(token: string): void {
  // Refused unread: a real ID token is a few KB.
  if (token.length > TOKEN_MAX_LENGTH) {
    throw refused(`The token is longer than ${TOKEN_MAX_LENGTH} characters.`);
  }
  if (!/^[A-Za-z0-9_.=-]+$/.test(token)) {
    throw refused("The token is not a JWT: base64url parts joined by dots.");
  }
  const parts = token.split(".");
  if (parts.length !== 3) throw refused("The token is not a JWT: it must have three base64url parts.");
  if ((parts[0]?.length ?? 0) > MAX_HEADER_CHARS) {
    throw refused(`The token's header is longer than ${MAX_HEADER_CHARS} characters.`);
  }
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    throw refused("The token's header is not a base64url JSON object.");
  }
  if (typeof header.alg !== "string" || !ALGORITHMS.includes(header.alg)) {
    throw refused("The token's `alg` must be RS256 or ES256.");
  }
}

/** Steps 2 and 3: the signature and every claim. Throws `401` naming the first check that failed. */
export async function verifyIdToken(
  token: string,
  trust: TrustTerms,
  policy: IssuerUrlPolicy,
): Promise<VerifiedToken> {
  checkTokenForm(token);
  let keys: JWTVerifyGetKey;
  try {
    keys = await issuerKeys(trust.issuer, policy);
  } catch (err) {
    if (err instanceof IssuerFailure) throw refused(err.message);
    throw err;
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await verifyByAnyKey(token, keys, {
      algorithms: ALGORITHMS,
      issuer: trust.issuer,
      audience: trust.audience,
      clockTolerance: CLOCK_SKEW_S,
      requiredClaims: ["exp", "jti"],
    }));
  } catch (err) {
    throw refused(joseFailure(err));
  }
  const now = Math.floor(Date.now() / 1000);
  const { exp, iat, jti, sub } = payload as Record<string, unknown>;
  if (typeof exp !== "number" || exp <= now) throw refused("The token has expired (`exp`).");
  if (iat !== undefined && typeof iat !== "number") throw refused("The token's `iat` must be a number.");
  if (iat !== undefined && iat > now + CLOCK_SKEW_S) {
    throw refused(`The token's \`iat\` is more than ${CLOCK_SKEW_S} s in the future.`);
  }
  if (iat === undefined && exp - now > MAX_TOKEN_LIFETIME_S) {
    throw refused("The token has no `iat`, and its `exp` is more than 24 h from now.");
  }
  if (iat !== undefined && exp - iat > MAX_TOKEN_LIFETIME_S) {
    throw refused("The token's `exp` is more than 24 h after its `iat`.");
  }
  if (typeof jti !== "string" || jti.length === 0 || jti.length > MAX_JTI_CHARS) {
    throw refused(`The token's \`jti\` must be a string of 1–${MAX_JTI_CHARS} characters.`);
  }
  if (sub !== undefined && typeof sub !== "string") throw refused("The token's `sub` must be a string.");
  const unmet = unmetCondition(trust.conditions, payload as Record<string, unknown>);
  if (unmet !== undefined)
    throw refused(`The token's \`${unmet}\` claim does not meet the trust's condition.`);
  return payload as VerifiedToken;
}

/** How many keys of its `alg` a token that names no `kid` is tried with (`verifyByAnyKey`). */
const MAX_KEYS_TRIED = 16;

/** A token without `kid` under a set of more than MAX_KEYS_TRIED keys of its `alg`. */
class KidNeeded extends Error {}

/** jose's failures of the token itself, whichever key verifies it (`verifyByAnyKey`). */
const TOKEN_FAILURES = [
  errors.JWTClaimValidationFailed,
  errors.JWTExpired,
  errors.JWTInvalid,
  errors.JWSInvalid,
  errors.JOSEAlgNotAllowed,
];

/**
 * jose's `jwtVerify`, where a token that names no `kid` under a set holding several keys of its
 * `alg` is verified by each of them in turn: §27 asks that it be signed "by a key of the trust's
 * issuer", not that it name which. A failure of the key (its signature does not verify, it does
 * not fit the `alg`) moves on to the next; one of the token (its claims, its form) is the answer.
 * At most MAX_KEYS_TRIED keys are tried (the next one is imported to learn that there is one): a
 * set of more (real issuers publish a handful) needs the token to name one.
 */
async function verifyByAnyKey(token: string, keys: JWTVerifyGetKey, options: JWTVerifyOptions) {
  try {
    return await jwtVerify(token, keys, options);
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
    let tried = 0;
    // What the keys said: a signature one did not make, else the last key's own failure.
    let refusal: unknown;
    for await (const key of err as unknown as AsyncIterable<CryptoKey>) {
      if (++tried > MAX_KEYS_TRIED) throw new KidNeeded();
      try {
        return await jwtVerify(token, key, options);
      } catch (failure) {
        // The token's own form or claims fail whichever key verifies it: that is the answer. Any
        // other failure is this key's (a signature it did not make, a key unfit for the `alg`,
        // as an RSA key under 2048 bits is): the next one.
        if (TOKEN_FAILURES.some((kind) => failure instanceof kind)) throw failure;
        if (!(refusal instanceof errors.JWSSignatureVerificationFailed)) refusal = failure;
      }
    }
    throw refusal ?? new errors.JWSSignatureVerificationFailed();
  }
}

const CLAIM_MESSAGES: Record<string, string> = {
  iss: "The token's `iss` is not the trust's issuer.",
  aud: "The token's `aud` is not, and does not contain, the trust's audience.",
  nbf: `The token's \`nbf\` is more than ${CLOCK_SKEW_S} s in the future.`,
  exp: "The token has expired (`exp`).",
};

/** The check a jose error stands for, as a message. */
function joseFailure(err: unknown): string {
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.reason === "missing") return `The token has no \`${err.claim}\` claim.`;
    if (err.reason === "check_failed" && CLAIM_MESSAGES[err.claim])
      return CLAIM_MESSAGES[err.claim] as string;
    return `The token's \`${err.claim}\` claim is not valid.`;
  }
  if (err instanceof errors.JWTExpired) return CLAIM_MESSAGES.exp as string;
  if (err instanceof errors.JOSEAlgNotAllowed) return "The token's `alg` must be RS256 or ES256.";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "The token's signature does not verify.";
  if (err instanceof KidNeeded) {
    return `The token names no \`kid\`, and the issuer's key set holds more than ${MAX_KEYS_TRIED} keys of its \`alg\`.`;
  }
  if (err instanceof errors.JWKSNoMatchingKey)
    return "No key of the issuer's key set matches the token's `kid` and `alg`.";
  if (err instanceof errors.JWKSTimeout) return "The issuer's key set did not arrive in time.";
  if (err instanceof errors.JWKSInvalid) return "The issuer's key set is not a JWK set.";
  if (err instanceof errors.JWTInvalid) return "The token's claims are not a JSON object.";
  if (err instanceof errors.JWSInvalid) return "The token is not a well-formed JWS.";
  // An extension the token's `crit` says must be understood, or a key type or curve.
  if (err instanceof errors.JOSENotSupported)
    return "The token needs what this service does not support: a `crit` header extension, or the issuer key's type or curve.";
  if (err instanceof errors.JOSEError) return "The issuer's key set could not be fetched or read.";
  // A key of the wrong type for its `alg` (an RSA key named for ES256), or the fetch's own error.
  if (err instanceof TypeError) return "The issuer's key for this token does not fit its `alg`.";
  return "The issuer's key set could not be fetched.";
}
