/** Hex digests: API key hashes, ETags, idempotency fingerprints. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** Lower-case hex of the first `length` bytes of `bytes` (all of them by default). */
export function toHex(bytes: Uint8Array, length = bytes.length): string {
  let hex = "";
  for (let i = 0; i < length; i++) hex += HEX[bytes[i] as number];
  return hex;
}

/** SHA-256 of `data` (a text is hashed as UTF-8), in hex; `length` bytes of it (all 32 by default). */
export async function sha256Hex(data: string | ArrayBuffer | Uint8Array, length = 32): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), length);
}
