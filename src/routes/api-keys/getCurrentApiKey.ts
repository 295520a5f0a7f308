import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getCurrentApiKey } from "../../services/api-keys/api-keys";
import { CurrentApiKeySchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/api-keys/current",
    operationId: "getCurrentApiKey",
    tags: ["API keys"],
    summary: "Read the API key making this request",
    description:
      "Its scopes, its project restriction, when it expires, when it was last used and the key it was made " +
      "from (`parent_id`). Any valid key " +
      "may call this: it needs no scope (it has no `x-required-scope`). The key itself is never shown.",
    scope: null,
    responses: { 200: jsonContent(CurrentApiKeySchema, "The calling key.") },
  });
  app.openapi(route, async (c) =>
    c.json(CurrentApiKeySchema.parse(await getCurrentApiKey(callerContext(c))), 200),
  );
}
