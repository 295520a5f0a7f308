/**
 * Tamper-evident D1 bookmarks (`X-D1-Bookmark`, src/middleware/d1-session.ts).
 *
 * A read that starts from a bookmark waits until its replica has caught up with it, and a
 * bookmark no replica will reach for a long time (a made-up one from the future) would hold the
 * read back or send it to the primary. So a bookmark is honoured only when the service handed it
 * out: each header value carries an HMAC-SHA-256 of the database it names and the bookmark, under
 * a key derived with HKDF from `VARIABLES_KEY` (./variables.ts's `deriveFromSecret`, a purpose of
 * its own: no new secret to configure). Any key may pass on a bookmark another key received
 * (the MAC binds no key); a value whose MAC does not verify, or that has none, is ignored exactly
 * as one of another database is. During a rotation, one made under `VARIABLES_KEY_PREVIOUS` still
 * verifies. Signing and checking are CPU only: no D1 statement, no call.
 *
 * Header value: `<database>:<bookmark>.<base64url HMAC>`.
 */
import { decodeBase64Url, encodeBase64Url } from "hono/utils/encode";
import { parseBookmarkHeader } from "../db/session";
import { deriveFromSecret, type VariableKeySecrets } from "./variables";

const encoder = new TextEncoder();
const HKDF_SALT = encoder.encode("deploy-platform/d1-bookmark");
const MAC_INFO = encoder.encode("d1-bookmark/hmac-sha-256/v1");

const macKey = (secret: string | undefined, name: string) =>
  deriveFromSecret(secret, name, "d1-bookmark", (ikm) =>
    crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: MAC_INFO },
      ikm,
      { name: "HMAC", hash: "SHA-256", length: 256 },
      false,
      ["sign", "verify"],
    ),
  );

/** What the MAC covers: the database and the bookmark, so neither can be changed alone. */
const signed = (database: string, bookmark: string) => encoder.encode(`${database}:${bookmark}`);

/** The header's value for `database`'s `bookmark`; rejects with VariableKeyConfigError without a usable key. */
export async function bookmarkHeader(
  keys: VariableKeySecrets,
  database: string,
  bookmark: string,
): Promise<string> {
  const mac = await crypto.subtle.sign(
    "HMAC",
    await macKey(keys.current, "VARIABLES_KEY"),
    signed(database, bookmark),
  );
  return `${database}:${bookmark}.${encodeBase64Url(mac).replace(/=+$/, "")}`;
}

/**
 * What a header's value says about `database`: its bookmark, when the service handed it out for
 * that database; null when it cannot be trusted for it (another database's, no database, no MAC,
 * a MAC that does not verify); undefined when the value is no bookmark at all. Rejects with
 * VariableKeyConfigError when `VARIABLES_KEY` is unusable.
 */
export async function bookmarkIn(
  keys: VariableKeySecrets,
  value: string,
  database: string,
): Promise<string | null | undefined> {
  const parts = parseBookmarkHeader(value);
  if (!parts) return undefined;
  if (parts.database !== database || parts.mac === null) return null;
  const mac = decodeBase64Url(parts.mac);
  const data = signed(database, parts.bookmark);
  if (await crypto.subtle.verify("HMAC", await macKey(keys.current, "VARIABLES_KEY"), mac, data)) {
    return parts.bookmark;
  }
  if (keys.previous?.trim()) {
    const previous = await macKey(keys.previous, "VARIABLES_KEY_PREVIOUS").catch(() => null);
    if (previous && (await crypto.subtle.verify("HMAC", previous, mac, data))) return parts.bookmark;
  }
  return null;
}
