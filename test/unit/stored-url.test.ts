/**
 * The one way in of every stored URL (API_CONTRACT §33, src/services/stored-url.ts): whatever the
 * field's own rule, a URL holding a user name or a password is `400 bad_input` at the field, in
 * every spelling the URL parser reads as credentials; the rule's own refusals keep their reason.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors";
import { checkIssuerUrl } from "../../src/services/oidc/issuer-url";
import { storedUrl } from "../../src/services/stored-url";
import { checkWebhookUrl } from "../../src/webhooks/url-guard";

const RULES = {
  "a receiver (production)": (raw: string) => checkWebhookUrl(raw, { allowInsecure: false }),
  "a receiver (ALLOW_INSECURE_WEBHOOKS)": (raw: string) => checkWebhookUrl(raw, { allowInsecure: true }),
  "an issuer (production)": (raw: string) => checkIssuerUrl(raw, { allowInsecure: false }),
  "an issuer (ALLOW_INSECURE_OIDC_ISSUERS)": (raw: string) => checkIssuerUrl(raw, { allowInsecure: true }),
};

/** The refusal `storedUrl` throws, or null when it takes the URL. */
function refusal(field: string, raw: string, rule: (raw: string) => ReturnType<typeof checkWebhookUrl>) {
  try {
    storedUrl(field, raw, rule, "Not allowed.");
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err;
  }
}

describe("storedUrl", () => {
  it.each(Object.entries(RULES))("under the rule of %s, refuses every URL with credentials", (_, rule) => {
    for (const raw of [
      "https://user:pass@hooks.example.com/x",
      "https://user@hooks.example.com/",
      "https://:pass@hooks.example.com/x",
      "https://us%40er:p%3Ass@hooks.example.com/x",
      "https://user:@hooks.example.com/x",
    ]) {
      const err = refusal("url", raw, rule);
      expect(err?.code, raw).toBe("bad_input");
      expect(err?.cause, raw).toEqual([
        { path: "url", message: expect.stringMatching(/user name or password/) },
      ]);
    }
  });

  it("refuses credentials with the insecure rules' own hosts too", () => {
    const err = refusal(
      "url",
      "http://admin:hunter2@127.0.0.1:8787/hook",
      RULES["a receiver (ALLOW_INSECURE_WEBHOOKS)"],
    );
    expect(err?.cause).toEqual([{ path: "url", message: expect.stringMatching(/user name or password/) }]);
    const issuer = refusal(
      "issuer",
      "http://ci@localhost:9000",
      RULES["an issuer (ALLOW_INSECURE_OIDC_ISSUERS)"],
    );
    expect(issuer?.cause).toEqual([
      { path: "issuer", message: expect.stringMatching(/user name or password/) },
    ]);
  });

  it("takes a URL without credentials, as the rule reads it; an empty `@` names none", () => {
    const rule = RULES["a receiver (production)"];
    expect(storedUrl("url", "https://hooks.example.com/x?token=abc", rule, "Not allowed.").href).toBe(
      "https://hooks.example.com/x?token=abc",
    );
    expect(storedUrl("url", "https://@hooks.example.com/x", rule, "Not allowed.").href).toBe(
      "https://hooks.example.com/x",
    );
  });

  it("keeps the rule's own refusal and reason, at the field", () => {
    const err = refusal("issuer", "https://issuer.example.com/?q=1", RULES["an issuer (production)"]);
    expect(err?.message).toBe("Not allowed.");
    expect(err?.cause).toEqual([{ path: "issuer", message: "Must have no query." }]);
  });
});
