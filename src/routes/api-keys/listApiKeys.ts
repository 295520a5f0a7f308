import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { apiKeyFilterKey, listApiKeys } from "../../services/api-keys/list";
import { apiKeyListQuery, apiKeyListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/api-keys",
    operationId: "listApiKeys",
    tags: ["API keys"],
    summary: "List API keys",
    description:
      "Your account's keys; an org owner or admin sees every key of the organization. A key restricted to " +
      "some projects (`project_ids`) sees only itself and the keys made from it, at any depth. Revoked keys included.",
    request: { query: apiKeyListQuery() },
    responses: { 200: jsonContent(apiKeyListSchema(), "A page of keys.") },
  });
  app.openapi(route, async (c) => {
    const { account_id, ...list } = c.req.valid("query");
    const filter = { accountId: account_id };
    const page = pageRequest(list, apiKeyFilterKey(filter));
    return c.json(await listApiKeys(callerContext(c), filter, page), 200);
  });
}
