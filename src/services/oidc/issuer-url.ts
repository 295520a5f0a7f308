/**
 * Which URLs may be an OpenID Connect issuer, or the key set an issuer points at (API_CONTRACT
 * §27): the webhook rule (src/webhooks/url-guard.ts: `https://` to a public host name, every
 * spelling of an address read as `fetch` would dial it; `http://` and loopback hosts only where
 * ALLOW_INSECURE_OIDC_ISSUERS=true, for a local issuer), and for the issuer itself no query or
 * fragment (OpenID Connect Discovery §2). The issuer is kept as written and compared with each
 * token's `iss` character for character (§27: "`iss` equal to the trust's issuer"); its discovery
 * document is found under it.
 */
import { checkWebhookUrl, type UrlCheck } from "../../webhooks/url-guard";

export type IssuerUrlPolicy = { allowInsecure: boolean };

export function checkIssuerUrl(raw: string, policy: IssuerUrlPolicy): UrlCheck {
  const check = checkWebhookUrl(raw, policy);
  if (!check.ok) return check;
  const { url } = check;
  if (url.search !== "" || raw.includes("?")) return { ok: false, reason: "Must have no query." };
  if (url.hash !== "" || raw.includes("#")) return { ok: false, reason: "Must have no fragment." };
  return check;
}

/** Where an issuer publishes its configuration (OpenID Connect Discovery §4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
}

/** Where an issuer's configuration says its keys are: any URL the webhook rule allows. */
export function checkKeySetUrl(raw: string, policy: IssuerUrlPolicy): UrlCheck {
  return checkWebhookUrl(raw, policy);
}
