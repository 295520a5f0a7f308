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

/**
 * The `webhook-signature` header value for one message: one `v1,` signature per secret, the
 * newest first, separated by one space (Standard Webhooks), so a receiver still holding the
 * previous secret verifies during a rotation. `timestamp` is in unix seconds.
 */
export async function signWebhook(
  secrets: string | readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Promise<string> {
  const content = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  const signatures: string[] = [];
  for (const secret of typeof secrets === "string" ? [secrets] : secrets) {
    const mac = await crypto.subtle.sign("HMAC", await signatureKey(secret), content);
    signatures.push(`v1,${encodeBase64(mac)}`);
  }
  return signatures.join(" ");
}

/** The secrets that sign now: the current one, and the previous one until it expires. */
export function activeSecrets(
  current: string,
  previous: string | null,
  previousExpiresAt: string | null,
  nowMs: number,
): string[] {
  return previous && previousExpiresAt && Date.parse(previousExpiresAt) > nowMs
    ? [current, previous]
    : [current];
}
