/**
 * Encryption at rest of `secret` and `secure_string` variable values (API_CONTRACT §3 "Variable").
 *
 * - AES-256-GCM (WebCrypto) under a key derived with HKDF-SHA-256 from the `VARIABLES_KEY`
 *   secret (base64 of 32 bytes), so the raw secret never keys the cipher itself and the same
 *   secret could later serve another purpose under another `info` without key reuse.
 * - A fresh random 96-bit IV per encryption.
 * - The variable's identity (id, environment, scope) is the additional authenticated data:
 *   a ciphertext copied onto another row, or a row moved to another scope, does not decrypt.
 * - Each ciphertext names the key it was made with. The key version is a 32-bit fingerprint
 *   derived from the secret (HKDF, its own `info`), not an operator-chosen number: there is no
 *   second setting that could disagree with the key, and a row always finds its key.
 *   Rotation: the new secret goes in `VARIABLES_KEY`, the old one in `VARIABLES_KEY_PREVIOUS`;
 *   reads use whichever key the row names, writes always use the current one.
 *
 * Envelope (the stored text): `v1.<key version>.<base64 IV>.<base64 ciphertext‖tag>`.
 * Pure: no bindings, no I/O; the caller passes the secrets in.
 */
import { decodeBase64, encodeBase64 } from "hono/utils/encode";

export const VALUE_ENVELOPE_PREFIX = "v1";
const HKDF_SALT = new TextEncoder().encode("deploy-platform/variables");
const CIPHER_INFO = new TextEncoder().encode("variables/aes-256-gcm/v1");
const KEY_ID_INFO = new TextEncoder().encode("variables/key-id/v1");
const AAD_LABEL = "deploy-platform/variable/v1";
const IV_BYTES = 12;
const SECRET_BYTES = 32;

/** The secrets as configured; either may be missing or malformed, which is reported when needed. */
export type VariableKeySecrets = { current: string | undefined; previous?: string | undefined };

/** What the ciphertext is bound to. */
export type VariableIdentity = { id: string; environmentId: string; scope: string };

export type EncryptedValue = { envelope: string; keyVersion: number };

/** The configuration is wrong (missing or malformed secret): an operator must act. */
export class VariableKeyConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VariableKeyConfigError";
  }
}

/**
 * The stored ciphertext cannot be opened: tampered, moved to another row, made under a key
 * that is no longer configured, or not an envelope at all. Never carries the value.
 */
export class VariableDecryptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VariableDecryptError";
  }
}

type DerivedKey = { version: number; key: CryptoKey };

/**
 * Keys derived from a secret per isolate, by purpose and the secret itself: a rotated secret
 * simply misses the cache. Bounded because an isolate only ever sees a couple of secrets (and a
 * few purposes).
 */
const derivedKeys = new Map<string, Promise<unknown>>();
const MAX_CACHED_KEYS = 16;

function decodeSecret(secret: string | undefined, name: string): Uint8Array {
  if (secret === undefined || secret.trim() === "") {
    throw new VariableKeyConfigError(`${name} is not set; it must be the base64 of 32 random bytes.`);
  }
  const text = secret.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new VariableKeyConfigError(`${name} is not standard base64; it must be the base64 of 32 bytes.`);
  }
  const bytes = decodeBase64(text);
  if (bytes.length !== SECRET_BYTES) {
    throw new VariableKeyConfigError(
      `${name} decodes to ${bytes.length} bytes; it must be the base64 of exactly ${SECRET_BYTES} bytes.`,
    );
  }
  return bytes;
}

/**
 * An AES-256-GCM key derived with HKDF-SHA-256 from `ikm` (an HKDF key) under `salt` and `info`:
 * every cipher key of this service is made this way, never the raw secret itself.
 */
export function aesGcmKey(ikm: CryptoKey, salt: Uint8Array, info: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt, info },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/**
 * What `make` derives from the secret (imported as an HKDF key), once per isolate for each
 * `purpose`: every key of this service made from `VARIABLES_KEY` comes through here, each under
 * its own HKDF salt and info, so no two purposes share a key. Rejects with VariableKeyConfigError
 * (checked before any work) when the secret is missing or malformed.
 */
export async function deriveFromSecret<T>(
  secret: string | undefined,
  name: string,
  purpose: string,
  make: (ikm: CryptoKey) => Promise<T>,
): Promise<T> {
  const raw = decodeSecret(secret, name);
  const cacheKey = `${purpose}\n${(secret as string).trim()}`;
  let derived = derivedKeys.get(cacheKey) as Promise<T> | undefined;
  if (!derived) {
    if (derivedKeys.size >= MAX_CACHED_KEYS) derivedKeys.clear();
    derived = crypto.subtle
      .importKey("raw", raw, "HKDF", false, ["deriveKey", "deriveBits"])
      .then((ikm) => make(ikm));
    derivedKeys.set(cacheKey, derived);
    derived.catch(() => derivedKeys.delete(cacheKey));
  }
  return derived;
}

async function derive(ikm: CryptoKey): Promise<DerivedKey> {
  const [key, idBits] = await Promise.all([
    aesGcmKey(ikm, HKDF_SALT, CIPHER_INFO),
    crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: KEY_ID_INFO }, ikm, 32),
  ]);
  return { version: new DataView(idBits).getUint32(0), key };
}

/** The derived key for a secret; rejects with VariableKeyConfigError when it is malformed. */
export async function deriveVariableKey(
  secret: string | undefined,
  name = "VARIABLES_KEY",
): Promise<DerivedKey> {
  return deriveFromSecret(secret, name, "variables", derive);
}

/** The key version (fingerprint) a secret produces; what its rows carry in `key_version`. */
export async function variableKeyVersion(
  secret: string | undefined,
  name = "VARIABLES_KEY",
): Promise<number> {
  return (await deriveVariableKey(secret, name)).version;
}

/** A JSON array is an unambiguous encoding: no choice of ids can make two identities collide. */
function additionalData(identity: VariableIdentity): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify([AAD_LABEL, identity.id, identity.environmentId, identity.scope]),
  );
}

/** Encrypts under the current key with a fresh IV. */
export async function encryptVariableValue(
  secrets: VariableKeySecrets,
  identity: VariableIdentity,
  plaintext: string,
): Promise<EncryptedValue> {
  const { version, key } = await deriveVariableKey(secrets.current);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: additionalData(identity) },
    key,
    new TextEncoder().encode(plaintext),
  );
  return {
    envelope: `${VALUE_ENVELOPE_PREFIX}.${version}.${encodeBase64(iv.buffer)}.${encodeBase64(sealed)}`,
    keyVersion: version,
  };
}

type ParsedEnvelope = { version: number; iv: Uint8Array; sealed: Uint8Array };

function parseEnvelope(envelope: string): ParsedEnvelope {
  const parts = envelope.split(".");
  const [prefix, version, iv, sealed] = parts;
  if (
    parts.length !== 4 ||
    prefix !== VALUE_ENVELOPE_PREFIX ||
    !version ||
    !/^\d{1,10}$/.test(version) ||
    !iv ||
    !sealed
  ) {
    throw new VariableDecryptError("The stored value is not an encrypted envelope.");
  }
  try {
    const parsed = { version: Number(version), iv: decodeBase64(iv), sealed: decodeBase64(sealed) };
    if (parsed.iv.length !== IV_BYTES) throw new Error("bad IV length");
    return parsed;
  } catch {
    throw new VariableDecryptError("The stored envelope is damaged.");
  }
}

/** Finds the configured key the envelope names: the current one, else the previous one. */
async function keyForVersion(secrets: VariableKeySecrets, version: number): Promise<CryptoKey> {
  const current = await deriveVariableKey(secrets.current);
  if (current.version === version) return current.key;
  if (secrets.previous !== undefined && secrets.previous.trim() !== "") {
    const previous = await deriveVariableKey(secrets.previous, "VARIABLES_KEY_PREVIOUS");
    if (previous.version === version) return previous.key;
  }
  throw new VariableDecryptError(
    `The value was encrypted under key version ${version}, which is neither VARIABLES_KEY (${current.version}) ` +
      "nor VARIABLES_KEY_PREVIOUS.",
  );
}

/**
 * Opens an envelope. `keyVersion` is the row's column; it must agree with the envelope, so
 * a hand-edited column cannot silently point a row at another key.
 */
export async function decryptVariableValue(
  secrets: VariableKeySecrets,
  identity: VariableIdentity,
  stored: { envelope: string; keyVersion: number | null },
): Promise<string> {
  const parsed = parseEnvelope(stored.envelope);
  if (stored.keyVersion !== null && stored.keyVersion !== parsed.version) {
    throw new VariableDecryptError("The row's key_version does not match its envelope.");
  }
  const key = await keyForVersion(secrets, parsed.version);
  let opened: ArrayBuffer;
  try {
    opened = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: parsed.iv, additionalData: additionalData(identity) },
      key,
      parsed.sealed,
    );
  } catch {
    throw new VariableDecryptError(
      "The value does not authenticate: it was altered, copied from another variable, or made under another key.",
    );
  }
  return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(opened);
}
