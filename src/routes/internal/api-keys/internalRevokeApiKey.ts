import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute } from "../../../openapi/define-route";
import { revokeApiKeyAsOperator } from "../../../services/api-keys/revoke";
import { IdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "delete",
    path: "/internal/v1/api-keys/{id}",
    operationId: "internalRevokeApiKey",
    description:
      "Revokes the key and every key made from it, at any depth. Idempotent for a revoked key; an unknown key is `404`.",
    request: { params: IdParams },
    responses: { 204: { description: "Revoked." } },
  });
  app.openapi(route, async (c) => {
    await revokeApiKeyAsOperator(c.get("ctx"), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
