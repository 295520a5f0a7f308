/** Which URLs an OpenID Connect issuer may have (API_CONTRACT §27), and where its configuration is. */
import { describe, expect, it } from "vitest";
import { checkIssuerUrl, discoveryUrl } from "../../src/services/oidc/issuer-url";

const secure = { allowInsecure: false };
const insecure = { allowInsecure: true };

describe("checkIssuerUrl", () => {
  it.each([
    "https://token.actions.githubusercontent.com",
    "https://gitlab.example.com",
    "https://gitlab.example.com/",
    "https://login.example.com/tenant/v2.0",
    // Kept as written, compared with `iss` as written: §27 asks only for https, no query, no fragment.
    "https://Issuer.example.com",
    "https://issuer.example.com:443/a",
    "https://issuer.example.com/a/../b",
    // §27 asks for https without query or fragment, loopback only with the variable; nothing more.
    "https://203.0.113.7/issuer",
    "https://10.0.0.8",
    "https://issuer",
    // Credentials: refused where an issuer is stored (§33, test/unit/stored-url.test.ts), not by §27's rule.
    "https://user:pw@issuer.example.com",
    `https://issuer.example.com/${"t".repeat(3000)}`,
  ])("takes %s", (url) => {
    expect(checkIssuerUrl(url, secure).ok).toBe(true);
  });

  it.each([
    ["http://issuer.example.com", /https/],
    ["https://127.0.0.1/x", /IP address/],
    ["https://localhost/x", /local or reserved/],
    ["https://issuer.example.com/?q=1", /query/],
    ["https://issuer.example.com/?", /query/],
    ["https://issuer.example.com/#f", /fragment/],
    ["https://[::1]/x", /loopback IP address/],
    ["https://[::ffff:127.0.0.1]/x", /loopback IP address/],
    ["https://api.localhost", /local or reserved/],
    // What the URL parser would repair, so that the issuer as written could never equal an `iss`.
    [" https://issuer.example.com", /written as a URL/],
    ["https://issuer.example.com\t", /written as a URL/],
    ["https://issuer.example.com/a b", /written as a URL/],
    ["https://issuer.example.com/a\nb", /written as a URL/],
    ["https:issuer.example.com", /written as a URL/],
    ["https:/issuer.example.com", /written as a URL/],
    ["https:\\\\issuer.example.com", /written as a URL/],
  ])("refuses %j", (url, reason) => {
    const check = checkIssuerUrl(url, secure);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(reason);
  });

  it("takes http:// and loopback issuers only where insecure issuers are allowed, still without query", () => {
    expect(checkIssuerUrl("http://127.0.0.1:8788/issuer", insecure).ok).toBe(true);
    expect(checkIssuerUrl("http://localhost:8788", insecure).ok).toBe(true);
    expect(checkIssuerUrl("http://127.0.0.1:8788/issuer?x", insecure).ok).toBe(false);
    expect(checkIssuerUrl("ftp://127.0.0.1/issuer", insecure).ok).toBe(false);
  });
});

describe("discoveryUrl", () => {
  it("appends the well-known path once, with or without the issuer's trailing slash", () => {
    expect(discoveryUrl("https://a.example.com")).toBe(
      "https://a.example.com/.well-known/openid-configuration",
    );
    expect(discoveryUrl("https://a.example.com/")).toBe(
      "https://a.example.com/.well-known/openid-configuration",
    );
    expect(discoveryUrl("https://a.example.com/t/v2")).toBe(
      "https://a.example.com/t/v2/.well-known/openid-configuration",
    );
  });
});
