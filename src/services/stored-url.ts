/**
 * The one way in of every URL the API stores (API_CONTRACT §33): a notification integration's
 * `url` (create and update, public and internal: ./integrations/integrations.ts), an OpenID
 * Connect trust's `issuer` (./oidc/trusts.ts), an audit stream's `url` (§30, through the
 * integrations' `allowedUrl`: ./audit/streams.ts), a deployment check's `details_url` (§31,
 * ./deployments/checks.ts). Each field keeps its own rule (`rule`: src/webhooks/url-guard.ts for a
 * receiver, ./oidc/issuer-url.ts for an issuer, `https://` for a check's details); here, beside it,
 * the rule they share: no user name and no password (`https://user:pass@host/…`,
 * `https://user@host/`), since a stored URL is shown to every reader of its record and kept in the
 * audit log for 400 days. Either refusal is `400 bad_input` with the field as its cause path.
 */
import { badInput } from "../errors";
import type { UrlCheck } from "../webhooks/url-guard";

/**
 * `raw` as the field's `rule` reads it, when the rule takes it and it holds no credentials; else
 * `400 bad_input` (`refusal` its message, `field` its cause path). Credentials are read from the
 * URL as parsed (WHATWG, the parser `fetch` uses), so every spelling of them counts: `user@`,
 * `:pass@`, percent-encoded, behind a backslash.
 */
export function storedUrl(field: string, raw: string, rule: (raw: string) => UrlCheck, refusal: string): URL {
  const check = rule(raw);
  if (!check.ok) throw badInput(refusal, [{ path: field, message: check.reason }]);
  if (check.url.username !== "" || check.url.password !== "") {
    throw badInput(`\`${field}\` holds a user name or password: a stored URL is shown to every reader.`, [
      {
        path: field,
        message:
          "Must not contain a user name or password (`user:pass@`): send a receiver's credentials another way, " +
          "such as a token in the path.",
      },
    ]);
  }
  return check.url;
}
