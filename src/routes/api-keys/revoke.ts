import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { revokeApiKey } from "../../services/api-keys/revoke";
import { ApiKeyParams } from "./schema";

export const revokeApiKeyRoute = defineRoute({
  method: "delete",
  path: "/v1/api-keys/{id}",
  operationId: "revokeApiKey",
  tags: ["API keys"],
  summary: "Revoke an API key",
  description:
    "Revokes the key and every key made from it, at any depth, in one step: the instance that answers refuses " +
    "them at once, every other within 60 s. Allowed for the key's own account, the account of any key it was " +
    "made from, and an organization owner or admin; any other key is `404`. Revoking a key that is already " +
    "revoked changes nothing and answers `204`.",
  request: { params: ApiKeyParams },
  responses: { 204: { description: "Revoked, with every key made from it." } },
});

export function registerRevokeApiKey(app: OpenAPIHono<AppEnv>) {
  app.openapi(revokeApiKeyRoute, async (c) => {
    await revokeApiKey(callerContext(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
