/**
 * Where a webhook may be sent (API_CONTRACT §3): `https://` to a public host name.
 *
 * The check runs on the URL as the WHATWG parser (the one `fetch` uses) reads it, so every
 * spelling of an address collapses to the form that would be dialled: `http://2130706433`,
 * `0x7f.1` and `0177.0.0.1` all become `127.0.0.1`, and `https://good.com@127.0.0.1` has
 * host `127.0.0.1`. Any IP literal is refused, not only private ones: a public IP has no
 * certificate a receiver would normally hold, and refusing all of them leaves no encoding
 * trick to reason about. Name resolution cannot be checked from a Worker; Cloudflare's
 * outbound fetch does not reach private networks, which covers names pointing inside.
 * Pure: the caller passes `allowInsecure` (ALLOW_INSECURE_WEBHOOKS, local development only). A URL
 * that holds credentials is refused where it is stored (src/services/stored-url.ts), not here.
 */
import { parseIPv4 } from "../lib/ip-address";

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export const MAX_URL_LENGTH = 2048;

/**
 * Loopback, link-local and private names (RFC 6761 `localhost`, mDNS `.local`, RFC 8375
 * `home.arpa`, ICANN's private-use `.internal`, and the common private suffixes): the hosts
 * API_CONTRACT §3 refuses. Reserved names that are none of these (`.test`, `.example`,
 * `.invalid`, `.onion`) are not refused: the contract does not list them, test suites and
 * documentation use them, and a delivery to one fails like one to any unreachable host.
 */
const PRIVATE_SUFFIXES = ["localhost", "local", "localdomain", "internal", "intranet", "lan", "home.arpa"];

const refuse = (reason: string): UrlCheck => ({ ok: false, reason });

export function checkWebhookUrl(raw: string, opts: { allowInsecure: boolean }): UrlCheck {
  // The bound is the caller's URL as sent; its parsed form may be longer (`é` is stored as
  // `%C3%A9`), and is stored as it is.
  if (raw.length > MAX_URL_LENGTH) return refuse(`Must be at most ${MAX_URL_LENGTH} characters.`);
  // What is stored, checked and dialled is the parser's form (API_CONTRACT §17: `new URL(u).href`):
  // spaces around it go, spaces inside are percent-encoded, tabs and newlines dropped.
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("Must be an absolute URL.");
  }
  // The parser keeps empty labels (`a..b`, `localhost..`); no resolver dials them. One
  // trailing dot (the DNS root, `example.com.`) is a real name.
  const name = url.hostname;
  if (name !== "" && !name.startsWith("[") && name.replace(/\.$/, "").split(".").includes("")) {
    return refuse("Must name a host without empty labels (`..`).");
  }
  if (opts.allowInsecure) {
    return url.protocol === "https:" || url.protocol === "http:"
      ? { ok: true, url }
      : refuse("Must be an http(s) URL.");
  }
  if (url.protocol !== "https:") return refuse("Must be an https:// URL.");
  const host = url.hostname.replace(/\.$/, "");
  if (host.startsWith("[")) return refuse(`Must name a public host, not an IP address (${ipv6Kind(host)}).`);
  const v4 = parseIPv4(host);
  if (v4) return refuse(`Must name a public host, not an IP address (${ipv4Kind(v4)}).`);
  if (PRIVATE_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`))) {
    return refuse("Must name a public host, not a local or reserved name.");
  }
  if (host === "" || !host.includes(".")) return refuse("Must name a public host (a fully qualified name).");
  // Credentials are refused where every stored URL is taken, whatever its rule (API_CONTRACT §33,
  // src/services/stored-url.ts), with ALLOW_INSECURE_WEBHOOKS as without.
  return { ok: true, url };
}

/** Names the kind of address, so the refusal says why it would be unsafe. */
export function ipv4Kind([a = 0, b = 0]: number[]): string {
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 169 && b === 254) return "link-local";
  if (a === 100 && b >= 64 && b <= 127) return "shared address space";
  if (a >= 224) return "multicast or reserved";
  return "IP literal";
}

function ipv6Kind(bracketed: string): string {
  const h = bracketed.slice(1, -1).toLowerCase();
  if (h === "::1") return "loopback";
  if (h === "::") return "unspecified";
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h);
  if (mapped?.[1] && mapped[2]) {
    const hi = Number.parseInt(mapped[1], 16);
    const lo = Number.parseInt(mapped[2], 16);
    return `IPv4-mapped ${ipv4Kind([hi >> 8, hi & 255, lo >> 8, lo & 255])}`;
  }
  if (/^f[cd]/.test(h)) return "private";
  if (/^fe[89ab]/.test(h)) return "link-local";
  return "IP literal";
}
