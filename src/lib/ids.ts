/** Identifiers (API_CONTRACT §2). */
export const ID_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** The three forms SPEC.md accepts: 22-char base58, lowercase UUID, 32 lowercase hex. */
export const ID_PATTERN =
  /^(?:[1-9A-HJ-NP-Za-km-z]{22}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/;

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/**
 * A new 22-character ID from 128 random bits. 58^22 > 2^128, so every value fits;
 * left-padding with the alphabet's zero keeps the length fixed. The bytes are divided by 58
 * in place (schoolbook long division, most significant byte first): no BigInt.
 */
export function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const out: string[] = new Array(22).fill(ID_ALPHABET[0]);
  let start = 0;
  for (let pos = 21; start < bytes.length; pos--) {
    let remainder = 0;
    for (let i = start; i < bytes.length; i++) {
      const value = (remainder << 8) | (bytes[i] as number);
      bytes[i] = (value / 58) | 0;
      remainder = value % 58;
    }
    out[pos] = ID_ALPHABET[remainder] as string;
    while (start < bytes.length && bytes[start] === 0) start++;
  }
  return out.join("");
}
