// Node-side helpers for scripts that write rows straight into the local D1 (first-run seeding,
// the benchmark's deep organization). IDs follow API_CONTRACT §2, keys §5.
import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** A 22-character ID over the contract's alphabet, from 128 random bits (as src/http/ids.ts). */
export function newId() {
  let n = BigInt(`0x${randomBytes(16).toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  return out.padStart(22, ALPHABET[0]);
}

/** A new API key and the SHA-256 hex the database stores for it (as src/services/api-keys.ts). */
export function newApiKey() {
  const key = `dpk_${randomBytes(32).toString("base64url")}`;
  return { key, hash: createHash("sha256").update(key).digest("hex") };
}

/** A SQL literal: NULL, or a single-quoted string with quotes doubled. */
export const sqlText = (s) =>
  s === null || s === undefined ? "NULL" : `'${String(s).replaceAll("'", "''")}'`;
