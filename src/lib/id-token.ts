/**
 * What can be read of an OpenID Connect ID token (a compact JWS) before it is verified, for the
 * token exchange (API_CONTRACT §27). Nothing here trusts it: src/services/oidc/verify.ts checks
 * the token; this only bounds it and reads its `exp` for the exchange's Idempotency-Key
 * (src/middleware/rate-limit.ts), which never outlives the token.
 */
import { decodeBase64Url } from "hono/utils/encode";

/** The longest token the exchange reads (real ones are 1–2 KiB). */
export const TOKEN_MAX_LENGTH = 16_384;

/**
 * The token's `exp` in seconds, read from its payload without verifying anything; undefined for a
 * token over TOKEN_MAX_LENGTH, not of three parts, or whose payload is not base64url JSON with a
 * numeric `exp`.
 */
export function unverifiedExp(token: string): number | undefined {
  if (token.length > TOKEN_MAX_LENGTH) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const claims: unknown = JSON.parse(new TextDecoder().decode(decodeBase64Url(parts[1] ?? "")));
    const exp = (claims as { exp?: unknown } | null)?.exp;
    return typeof exp === "number" ? exp : undefined;
  } catch {
    return undefined;
  }
}
