/** The OpenID Connect routes (API_CONTRACT §27, §28): no project role governs them. */
import type { UnscopedRoute } from "../types";

const tested = (folder: string, operationId: string) =>
  `tested in test/routes/${folder}/${operationId}.test.ts`;

export const unscoped: UnscopedRoute[] = [
  {
    name: "POST /v1/oidc-trusts",
    why: `an org owner or admin with a key not restricted to projects, else 403 unauthorized; ${tested("oidc-trusts", "createOidcTrust")}`,
  },
  {
    name: "GET /v1/oidc-trusts",
    why: `the organization's trusts for an owner or admin, none for any other key (200 for everyone); ${tested("oidc-trusts", "listOidcTrusts")}`,
  },
  {
    name: "GET /v1/oidc-trusts/{id}",
    why: `a trust of the organization for an owner or admin, else 404; ${tested("oidc-trusts", "getOidcTrust")}`,
  },
  {
    name: "DELETE /v1/oidc-trusts/{id}",
    why: `an org owner or admin with a key not restricted to projects, else 403 unauthorized; ${tested("oidc-trusts", "deleteOidcTrust")}`,
  },
  {
    name: "POST /v1/oidc/token",
    why: `takes no API key: the ID token authenticates; ${tested("oidc", "exchangeOidcToken")}`,
  },
];
