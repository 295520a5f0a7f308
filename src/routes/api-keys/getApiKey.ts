import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getApiKey } from "../../services/api-keys/list";
import { ApiKeyParams, ApiKeySchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/api-keys/{id}",
    operationId: "getApiKey",
    tags: ["API keys"],
    summary: "Read an API key",
    description: "Visible as in `listApiKeys`, else `404`. Never the key itself.",
    request: { params: ApiKeyParams },
    responses: { 200: jsonContent(ApiKeySchema, "The key's record.") },
  });
  app.openapi(route, async (c) => c.json(await getApiKey(callerContext(c), c.req.valid("param").id), 200));
}
