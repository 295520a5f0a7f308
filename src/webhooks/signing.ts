/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `v1,` + base64 of
 * HMAC-SHA256(key, `${id}.${timestamp}.${body}`), where the key is the base64-decoded part
 * of the `whsec_…` secret. WebCrypto only, so it runs unchanged in the Worker and in tests.
 */
import { decodeBase64, encodeBase64 } from "hono/utils/encode";

export const SECRET_PREFIX = "whsec_";

/** `whsec_` + base64 of 32 random bytes: shown once, in the create response. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(32)).buffer);
}

export async function signatureKey(secret: string): Promise<CryptoKey> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return crypto.subtle.importKey("raw", decodeBase64(encoded), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

/** The `webhook-signature` header value for one message. `timestamp` is in unix seconds. */
export async function signWebhook(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
): Promise<string> {
  const key = await signatureKey(secret);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${encodeBase64(mac)}`;
}
