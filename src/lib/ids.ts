/** Identifiers (API_CONTRACT §2). */
export const ID_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE = BigInt(ID_ALPHABET.length);

/** The three forms SPEC.md accepts: 22-char base58, lowercase UUID, 32 lowercase hex. */
export const ID_PATTERN =
  /^(?:[1-9A-HJ-NP-Za-km-z]{22}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/;

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/**
 * A new 22-character ID from 128 random bits. 58^22 > 2^128, so every value fits;
 * left-padding with the alphabet's zero keeps the length fixed.
 */
export function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = ID_ALPHABET[Number(n % BASE)] + out;
    n /= BASE;
  }
  return out.padStart(22, ID_ALPHABET[0]);
}
