/** Identifiers (API_CONTRACT §2). */
export const ID_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE = ID_ALPHABET.length;

/** The three forms SPEC.md accepts: 22-char base58, lowercase UUID, 32 lowercase hex. */
export const ID_PATTERN =
  /^(?:[1-9A-HJ-NP-Za-km-z]{22}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/;

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/**
 * A new 22-character ID from 128 random bits. 58^22 > 2^128, so every value fits; leading
 * zero digits are the alphabet's first character, so the length is fixed.
 */
export function newId(): string {
  return encodeId(crypto.getRandomValues(new Uint32Array(4)));
}

const ALPHABET_CODES = Array.from(ID_ALPHABET, (ch) => ch.charCodeAt(0));
/** The digits of the ID being encoded; reused (encoding is synchronous). */
const digits: number[] = new Array(22).fill(0);

/**
 * 128 bits (four 32-bit limbs, most significant first) as 22 base58 digits, most significant
 * first; consumes `limbs`. The limbs are divided by 58 in turn (each step's remainder · 2^32 +
 * limb < 58 · 2^32 < 2^53 stays an exact float): the same digits as dividing the 128-bit number,
 * without BigInt, and one string allocated (the request id of every request is one of these).
 */
export function encodeId(limbs: Uint32Array): string {
  for (let digit = 21; digit >= 0; digit--) {
    let rest = 0;
    for (let i = 0; i < 4; i++) {
      const value = rest * 0x1_0000_0000 + (limbs[i] as number);
      limbs[i] = Math.floor(value / BASE);
      rest = value % BASE;
    }
    digits[digit] = ALPHABET_CODES[rest] as number;
  }
  return String.fromCharCode.apply(null, digits);
}
