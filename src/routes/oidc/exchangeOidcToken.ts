import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { LOCATION_HEADER, NO_STORE_HEADER } from "../../openapi/components";
import { ETAG_HEADER } from "../../openapi/conditional";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { OidcTokenExchangeBody } from "../../schemas/oidc-writes";
import { NewApiKeySchema } from "../../schemas/organization";
import { exchangeOidcToken } from "../../services/oidc/exchange";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/oidc/token",
    operationId: "exchangeOidcToken",
    keyless: true,
    lostAnswer: { rebuild: "none", why: "the new key is shown once" },
    tags: ["OpenID Connect"],
    summary: "Exchange a CI run's ID token for a short-lived key",
    description:
      "Takes no API key: the token authenticates (a request that sends `x-api-key` too is `400`). The token is a JWT " +
      "signed with `RS256` or `ES256` by a key of the trust's issuer (from `<issuer>/.well-known/openid-configuration`), " +
      "with `iss` the trust's issuer, `aud` equal to or containing its audience, `exp` in the future and at most 24 h " +
      "after `iat` (after the exchange when there is no `iat`), `iat` and `nbf` (when present) at most 60 s ahead, a " +
      "`jti` never exchanged before, and every condition of the trust met (`sub` is optional: without it the key's " +
      "`oidc.subject` is null). Any of these failing, an unknown or deleted trust included, is `401` with a message " +
      "naming the check; a key past the organization's `api_keys` limit is `409`, the token not spent. " +
      "The key acts as the trust's account with its scopes and projects, expires `ttl` seconds from now " +
      "(or when the trust's parent key expires, if that is sooner), " +
      "and is revoked with the trust or its parent key. Only this answer shows `key` (`no-store`). An `Idempotency-Key` " +
      "is the token's own (as another request's is its API key's): a retry from the same address with the same key " +
      "and body answers the stored `201`, the same key, with `Idempotent-Replayed: true`, until the token's `exp`; a " +
      "`401` keeps no key. Without one, a token is exchanged once. Policy `oidc-exchange` (60 per " +
      "minute per client address, every exchange counted).",
    rateLimit: "oidc-exchange",
    request: { body: jsonBody(OidcTokenExchangeBody) },
    responses: {
      201: {
        ...jsonContent(NewApiKeySchema, "The new key's record, with the key itself."),
        headers: { ...LOCATION_HEADER, ...NO_STORE_HEADER, ...ETAG_HEADER },
      },
    },
  });
  app.openapi(route, async (c) => {
    const { created, etag } = await exchangeOidcToken(c.get("ctx"), c.req.valid("json"));
    // It carries the key itself: no cache may keep it. Its ETag is the record's, as a GET shows it.
    c.header("cache-control", "no-store");
    c.header("ETag", etag);
    c.header("Location", `/v1/api-keys/${created.id}`);
    return c.json(created, 201);
  });
}
