/**
 * The part of jose (v6) the token exchange used, in Web Crypto (API_CONTRACT §27): a compact JWS
 * signed with RS256 or ES256 verified by a key of a JWK set, and a JWT's claims checked, with
 * jose's checks in jose's order and its failures under its names (./verify.ts names each in its
 * refusal). jose brought 17 KB of JavaScript (6 KiB gzip) to the deployed upload, and every new
 * isolate compiles every module of it (bench/README.md, "Bundle"); what is left is this module.
 *
 * - the protected header: base64url JSON, an object; `crit` integrity protected, an array of
 *   non-empty strings naming only `b64`, which must then be a boolean (and `true`: a JWT's payload
 *   is encoded); `alg` one of the allowed;
 * - the key: a JWK set's keys of the `alg`'s type (`RSA`; `EC` on `P-256`), of its `kid` when the
 *   header names one, of no other `alg`, `use` or `key_ops`, imported once per set as public keys;
 *   several candidates are a JWKSMultipleMatchingKeys whose iteration yields each importable one;
 * - the signature: an RSA key of 2048 bits or more; Web Crypto's verdict;
 * - the claims: a JSON object; the required claims present (`iss` and `aud` too when checked), then
 *   `iss`, `aud` (equal to, or a list holding, the audience), `iat` and `nbf` numbers, `nbf` at most
 *   the tolerance ahead, `exp` a number more than the tolerance ago.
 */

export type JWTPayload = Record<string, unknown> & {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  jti?: string;
  nbf?: number;
  exp?: number;
  iat?: number;
};
export type JSONWebKeySet = { keys: Record<string, unknown>[] };
type Header = Record<string, unknown>;
export type JWTVerifyGetKey = (header: Header, token?: unknown) => Promise<CryptoKey>;
export type JWTVerifyOptions = {
  algorithms: string[];
  issuer: string;
  audience: string;
  clockTolerance: number;
  requiredClaims: string[];
};

class JOSEError extends Error {
  constructor(message?: string) {
    super(message);
    this.name = new.target.name;
  }
}
/** A claim's failure: which claim, and why. */
class ClaimFailure extends JOSEError {
  constructor(
    message: string,
    readonly claim: string,
    readonly reason: "missing" | "check_failed" | "invalid",
  ) {
    super(message);
  }
}
class JWTClaimValidationFailed extends ClaimFailure {}
class JWTExpired extends ClaimFailure {}
class JWKSMultipleMatchingKeys extends JOSEError {
  constructor(readonly keys: () => AsyncIterable<CryptoKey>) {
    super("multiple matching keys found in the JSON Web Key Set");
  }
  [Symbol.asyncIterator]() {
    return this.keys()[Symbol.asyncIterator]();
  }
}
export const errors = {
  JOSEError,
  JOSEAlgNotAllowed: class JOSEAlgNotAllowed extends JOSEError {},
  JOSENotSupported: class JOSENotSupported extends JOSEError {},
  JWKSInvalid: class JWKSInvalid extends JOSEError {},
  JWKSMultipleMatchingKeys,
  JWKSNoMatchingKey: class JWKSNoMatchingKey extends JOSEError {},
  JWKSTimeout: class JWKSTimeout extends JOSEError {},
  JWSInvalid: class JWSInvalid extends JOSEError {},
  JWSSignatureVerificationFailed: class JWSSignatureVerificationFailed extends JOSEError {},
  JWTClaimValidationFailed,
  JWTExpired,
  JWTInvalid: class JWTInvalid extends JOSEError {},
};

/** Each allowed `alg`: the JWK type its keys have, and Web Crypto's parameters. */
const ALGORITHMS: Record<
  string,
  { kty: string; crv?: string; key: SubtleCryptoImportKeyAlgorithm; verify: SubtleCryptoSignAlgorithm }
> = {
  RS256: {
    kty: "RSA",
    key: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    verify: { name: "RSASSA-PKCS1-v1_5" },
  },
  ES256: {
    kty: "EC",
    crv: "P-256",
    key: { name: "ECDSA", namedCurve: "P-256" },
    verify: { name: "ECDSA", hash: "SHA-256" },
  },
};

/** `alg`'s entry, when it is one of ALGORITHMS' own. */
const entryOf = (alg: string) => (Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined);

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const fromBase64 = (Uint8Array as { fromBase64?: (text: string, options: object) => Uint8Array }).fromBase64;

/** Bytes of base64url text, as jose decodes it; TypeError when it is not base64url. */
function base64url(text: string): Uint8Array {
  try {
    if (fromBase64) return fromBase64(text, { alphabet: "base64url" });
    if (text.includes("+") || text.includes("/")) throw new TypeError("Invalid base64url");
    return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
  } catch {
    throw new TypeError("The input to be decoded is not correctly encoded.");
  }
}

/** A plain object: `{…}` parsed from JSON, not an array or null. */
function isObject(input: unknown): input is Record<string, unknown> {
  if (typeof input !== "object" || input === null) return false;
  if (Object.prototype.toString.call(input) !== "[object Object]") return false;
  const prototype = Object.getPrototypeOf(input);
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/** JSON of base64url text, a plain object; `fail` otherwise. */
function jsonObject(text: string, fail: () => Error): Record<string, unknown> {
  let parsed: unknown;
  try {
    if (!text) throw fail();
    parsed = JSON.parse(strictDecoder.decode(base64url(text)));
  } catch {
    throw fail();
  }
  if (!isObject(parsed)) throw fail();
  return parsed;
}

/** A compact token's protected header, unverified. */
export function decodeProtectedHeader(token: string): Header {
  const parts = token.split(".");
  const fail = () => new TypeError("Invalid Token or Protected Header formatting");
  if (parts.length !== 3 && parts.length !== 5) throw fail();
  return jsonObject(parts[0] ?? "", fail);
}

/** Whether a JWK of the set may verify tokens of `alg` (jose's `isUsableJWK`). */
function usable(jwk: Record<string, unknown>, alg: string, kid: unknown): boolean {
  const entry = entryOf(alg);
  const ops = jwk.key_ops;
  return (
    entry !== undefined &&
    (jwk.ext === undefined || typeof jwk.ext === "boolean") &&
    (ops === undefined ||
      (Array.isArray(ops) &&
        ops.every((op, i) => typeof op === "string" && ops.indexOf(op) === i) &&
        ops.includes("verify"))) &&
    jwk.kty === entry.kty &&
    (kid === undefined || (typeof kid === "string" && kid === jwk.kid)) &&
    (jwk.alg === undefined || jwk.alg === alg) &&
    (jwk.use === undefined || jwk.use === "sig") &&
    (!entry.crv || jwk.crv === entry.crv)
  );
}

/** The key resolver of a JWK set (JWKSInvalid when it is none). */
export function createLocalJWKSet(jwks: JSONWebKeySet): JWTVerifyGetKey {
  if (!isObject(jwks) || !Array.isArray(jwks.keys) || !jwks.keys.every(isObject)) {
    throw new errors.JWKSInvalid("JSON Web Key Set malformed");
  }
  const keys = jwks.keys.map((jwk) => ({ ...jwk }));
  const imported = new Map<Record<string, unknown>, Promise<CryptoKey>>();
  const importOnce = (jwk: Record<string, unknown>, alg: string) => {
    let key = imported.get(jwk);
    if (!key) {
      key = importKey(jwk, alg);
      imported.set(jwk, key);
      key.catch(() => imported.delete(jwk));
    }
    return key;
  };
  return async (header) => {
    const { alg, kid } = header;
    if (typeof alg !== "string" || !entryOf(alg)) {
      throw new errors.JOSENotSupported('Unsupported "alg" value for a JSON Web Key Set');
    }
    const candidates = keys.filter((jwk) => usable(jwk, alg, kid));
    const [only] = candidates;
    if (!only) throw new errors.JWKSNoMatchingKey("no applicable key found in the JSON Web Key Set");
    if (candidates.length > 1) {
      throw new JWKSMultipleMatchingKeys(async function* () {
        for (const jwk of candidates) {
          try {
            yield await importOnce(jwk, alg);
          } catch {}
        }
      });
    }
    return importOnce(only, alg);
  };
}

/** A JWK of the set as a public key for `alg`. */
async function importKey(jwk: Record<string, unknown>, alg: string): Promise<CryptoKey> {
  const entry = entryOf(alg) as (typeof ALGORITHMS)[string];
  const { alg: _alg, use: _use, ...data } = jwk;
  const usages = (jwk.key_ops as string[] | undefined) ?? [jwk.d || jwk.priv ? "sign" : "verify"];
  const key = await crypto.subtle.importKey(
    "jwk",
    { ...data, ext: true } as JsonWebKey,
    entry.key,
    true,
    usages,
  );
  if (key.type !== "public") throw new errors.JWKSInvalid("JSON Web Key Set members must be public keys");
  return key;
}

/** The key fits `alg` (jose's `checkCryptoKey` and `checkModulusLength`); TypeError when not. */
function checkKey(key: CryptoKey, alg: string): void {
  const entry = entryOf(alg) as (typeof ALGORITHMS)[string];
  const algorithm = key.algorithm as {
    name: string;
    hash?: { name: string };
    namedCurve?: string;
    modulusLength?: number;
  };
  const expected = entry.key as { name: string; hash?: string; namedCurve?: string };
  if (
    algorithm.name !== expected.name ||
    (expected.hash && algorithm.hash?.name !== expected.hash) ||
    (expected.namedCurve && algorithm.namedCurve !== expected.namedCurve) ||
    !key.usages.includes("verify")
  ) {
    throw new TypeError(`CryptoKey does not support this operation for ${alg}`);
  }
  if (
    entry.kty === "RSA" &&
    (typeof algorithm.modulusLength !== "number" || algorithm.modulusLength < 2048)
  ) {
    throw new TypeError(`${alg} requires key modulusLength to be 2048 bits or larger`);
  }
}

/** `crit`, as jose reads it: the extensions it names, each one it understands (only `b64`). */
function checkCrit(header: Header): string[] {
  const { crit } = header;
  if (crit === undefined) return [];
  if (
    !Array.isArray(crit) ||
    crit.length === 0 ||
    crit.some((p) => typeof p !== "string" || p.length === 0)
  ) {
    throw new errors.JWSInvalid(
      '"crit" (Critical) Header Parameter MUST be an array of non-empty strings when present',
    );
  }
  for (const parameter of crit as string[]) {
    if (parameter !== "b64") {
      throw new errors.JOSENotSupported(`Extension Header Parameter "${parameter}" is not recognized`);
    }
    if (header[parameter] === undefined) {
      throw new errors.JWSInvalid(`Extension Header Parameter "${parameter}" is missing`);
    }
  }
  return crit as string[];
}

/**
 * A compact JWS verified by `keyOf` (a key, or a resolver of the header's), then its payload's
 * claims checked (jose's `jwtVerify`).
 */
export async function jwtVerify(
  token: string,
  keyOf: CryptoKey | JWTVerifyGetKey,
  options: JWTVerifyOptions,
): Promise<{ payload: JWTPayload; protectedHeader: Header }> {
  const parts = token.split(".");
  if (parts.length !== 3) throw new errors.JWSInvalid("Invalid Compact JWS");
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const header = jsonObject(encodedHeader, () => new errors.JWSInvalid("JWS Protected Header is invalid"));
  let b64 = true;
  if (checkCrit(header).includes("b64")) {
    if (typeof header.b64 !== "boolean") {
      throw new errors.JWSInvalid('The "b64" (base64url-encode payload) Header Parameter must be a boolean');
    }
    b64 = header.b64;
  }
  const { alg } = header;
  if (typeof alg !== "string" || !alg) {
    throw new errors.JWSInvalid('JWS "alg" (Algorithm) Header Parameter missing or invalid');
  }
  const entry = entryOf(alg);
  if (!options.algorithms.includes(alg) || !entry) {
    throw new errors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');
  }
  const key = typeof keyOf === "function" ? await keyOf(header) : keyOf;
  if (/[^\x00-\x7f]/.test(encodedPayload)) {
    throw new errors.JWSInvalid("JWS Compact Serialization payload must use only ASCII characters");
  }
  const signed = new TextEncoder().encode(`${encodedHeader}.${encodedPayload}`);
  let signature: Uint8Array;
  try {
    signature = base64url(encodedSignature);
  } catch {
    throw new errors.JWSInvalid("Failed to base64url decode the signature");
  }
  if (key.type !== "public") throw new TypeError(`CryptoKey instances must be of type "public" for ${alg}`);
  checkKey(key, alg);
  let verified = false;
  try {
    verified = await crypto.subtle.verify(entry.verify, key, signature, signed);
  } catch {
    throw new errors.JWSSignatureVerificationFailed("signature verification failed");
  }
  if (!verified) throw new errors.JWSSignatureVerificationFailed("signature verification failed");
  if (!b64) throw new errors.JWTInvalid("JWTs MUST NOT use unencoded payload");
  let payloadBytes: Uint8Array;
  try {
    payloadBytes = base64url(encodedPayload);
  } catch {
    throw new errors.JWSInvalid("Failed to base64url decode the payload");
  }
  return { payload: claims(payloadBytes, options), protectedHeader: header };
}

/** jose's `validateClaimsSet`, for the options the exchange gives. */
function claims(bytes: Uint8Array, options: JWTVerifyOptions): JWTPayload {
  const invalid = () => new errors.JWTInvalid("JWT Claims Set must be a top-level JSON object");
  let payload: unknown;
  try {
    payload = JSON.parse(strictDecoder.decode(bytes));
  } catch {
    throw invalid();
  }
  if (!isObject(payload)) throw invalid();
  for (const claim of new Set([...options.requiredClaims, "aud", "iss"].reverse())) {
    if (!Object.hasOwn(payload, claim)) {
      throw new JWTClaimValidationFailed(`missing required "${claim}" claim`, claim, "missing");
    }
  }
  const unexpected = (claim: string) =>
    new JWTClaimValidationFailed(`unexpected "${claim}" claim value`, claim, "check_failed");
  if (payload.iss !== options.issuer) throw unexpected("iss");
  const { aud } = payload;
  if (!(aud === options.audience || (Array.isArray(aud) && aud.includes(options.audience)))) {
    throw unexpected("aud");
  }
  const now = Math.floor(Date.now() / 1000);
  const date = (claim: string) => {
    const value = payload[claim];
    if (value !== undefined && typeof value !== "number") {
      throw new JWTClaimValidationFailed(`"${claim}" claim must be a number`, claim, "invalid");
    }
    return value as number | undefined;
  };
  date("iat");
  const nbf = date("nbf");
  if (nbf !== undefined && nbf > now + options.clockTolerance) {
    throw new JWTClaimValidationFailed('"nbf" claim timestamp check failed', "nbf", "check_failed");
  }
  const exp = date("exp");
  if (exp !== undefined && exp <= now - options.clockTolerance) {
    throw new JWTExpired('"exp" claim timestamp check failed', "exp", "check_failed");
  }
  return payload as JWTPayload;
}
