import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { revokeApiKey } from "../../services/api-keys/revoke";
import { ApiKeyParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/api-keys/{id}",
    operationId: "revokeApiKey",
    lostAnswer: { rebuild: "status" },
    tags: ["API keys"],
    summary: "Revoke an API key",
    description:
      "Revokes the key and every key made from it, at any depth (refused everywhere within 60 s). For the " +
      "key's account, the account of a key it was made from, and an org owner or admin; else `404`. A key " +
      "restricted to some projects (`project_ids`) reaches only itself and the keys made from it. A revoked " +
      "key answers `204` again.",
    request: { params: ApiKeyParams },
    responses: { 204: { description: "Revoked." } },
  });
  app.openapi(route, async (c) => {
    await revokeApiKey(callerContext(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
