/** The API key routes (API_CONTRACT §15, §21): no project role governs them, an org role does. */
import type { UnscopedRoute } from "../types";

const tested = (operationId: string) => `tested in test/routes/api-keys/${operationId}.test.ts`;

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/api-keys/current",
    why: `the calling key's own record, for any valid key; ${tested("getCurrentApiKey")}`,
  },
  {
    name: "POST /v1/api-keys",
    why: `needs an org role (owner or admin, else 403 unauthorized), not a project role; ${tested("createApiKey")}`,
  },
  {
    name: "GET /v1/api-keys",
    why: `the keys of the caller's account, or of its organization for an owner or admin (200 for everyone); ${tested("listApiKeys")}`,
  },
  {
    name: "GET /v1/api-keys/{id}",
    why: `a key of the caller's account, or any of its organization for an owner or admin, else 404; ${tested("getApiKey")}`,
  },
  {
    name: "DELETE /v1/api-keys/{id}",
    why: `the key's account, an ancestor key's account, or an org owner or admin, else 404; ${tested("revokeApiKey")}`,
  },
];
