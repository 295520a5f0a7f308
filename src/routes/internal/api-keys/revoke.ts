import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute } from "../../../openapi/define-route";
import { revokeApiKey } from "../../../services/api-keys/api-keys";
import { IdParams } from "../schema";

export const internalRevokeApiKeyRoute = defineInternalRoute({
  method: "delete",
  path: "/internal/v1/api-keys/{id}",
  operationId: "internalRevokeApiKey",
  description: "Idempotent for a revoked key; an unknown key is `404`.",
  request: { params: IdParams },
  responses: { 204: { description: "Revoked." } },
});

export function registerInternalRevokeApiKey(app: OpenAPIHono<AppEnv>) {
  app.openapi(internalRevokeApiKeyRoute, async (c) => {
    await revokeApiKey(c.get("ctx"), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
