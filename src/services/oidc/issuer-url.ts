/**
 * Which URLs may be an OpenID Connect issuer, or the key set an issuer points at, as API_CONTRACT
 * §27 says and no more: an `https://` URL (`http://` and loopback hosts only where
 * ALLOW_INSECURE_OIDC_ISSUERS=true, for a local issuer), and for the issuer itself no query or
 * fragment (OpenID Connect Discovery §2). Not the webhook rule (src/webhooks/url-guard.ts), whose
 * public-host, length and credential rules §27 does not state; Cloudflare's outbound fetch does not
 * reach private networks, and an issuer that cannot be fetched fails its exchanges with a 401 naming
 * that. The issuer is kept as written and compared with each
 * token's `iss` character for character (§27: "`iss` equal to the trust's issuer"); its discovery
 * document is found under it.
 */
import { parseIPv4 } from "../../lib/ip-address";
import { writtenAsUrl } from "../../lib/written-url";
import type { UrlCheck } from "../../webhooks/url-guard";

export type IssuerUrlPolicy = { allowInsecure: boolean };

const refuse = (reason: string): UrlCheck => ({ ok: false, reason });

/** 127.0.0.0/8 written as IPv4, or inside an IPv4-mapped IPv6 address (`[::ffff:7f00:1]`). */
function loopbackAddress(host: string): boolean {
  const v4 = parseIPv4(host);
  if (v4) return v4[0] === 127;
  if (host === "[::1]") return true;
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(host);
  return mapped !== null && Number.parseInt(mapped[1] as string, 16) >> 8 === 127;
}

/** §27's rule for a URL the exchange fetches: https, loopback hosts only with the variable. */
function checkFetchable(raw: string, policy: IssuerUrlPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("Must be an absolute URL.");
  }
  if (policy.allowInsecure) {
    return url.protocol === "https:" || url.protocol === "http:"
      ? { ok: true, url }
      : refuse("Must be an http(s) URL.");
  }
  if (url.protocol !== "https:") return refuse("Must be an https:// URL.");
  const host = url.hostname.replace(/\.$/, "").toLowerCase();
  if (loopbackAddress(host)) {
    return refuse("Must not be a loopback IP address (only where ALLOW_INSECURE_OIDC_ISSUERS=true).");
  }
  if (host === "localhost" || host.endsWith(".localhost")) {
    return refuse(
      "Must not be a loopback name, a local or reserved name (only where ALLOW_INSECURE_OIDC_ISSUERS=true).",
    );
  }
  return { ok: true, url };
}

export function checkIssuerUrl(raw: string, policy: IssuerUrlPolicy): UrlCheck {
  if (!writtenAsUrl(raw)) {
    return refuse("Must be written as a URL: `https://` then the host, with no space or control character.");
  }
  const check = checkFetchable(raw, policy);
  if (!check.ok) return check;
  const { url } = check;
  if (url.search !== "" || raw.includes("?")) return refuse("Must have no query.");
  if (url.hash !== "" || raw.includes("#")) return refuse("Must have no fragment.");
  return check;
}

/** Where an issuer publishes its configuration (OpenID Connect Discovery §4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
}

/** Where an issuer's configuration says its keys are: a URL the same rule allows, query or not. */
export function checkKeySetUrl(raw: string, policy: IssuerUrlPolicy): UrlCheck {
  return checkFetchable(raw, policy);
}
