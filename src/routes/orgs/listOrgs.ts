import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listOrgs } from "../../services/orgs/orgs";
import { organizationListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/orgs",
    operationId: "listOrgs",
    tags: ["Organizations"],
    summary: "List your organizations",
    description: "An API key belongs to one organization: the list holds that organization.",
    request: { query: listQuery() },
    responses: { 200: jsonContent(organizationListSchema(), "Your organization.") },
  });
  app.openapi(route, async (c) => {
    pageRequest(c.req.valid("query")); // validates a cursor even though the list has one page
    return c.json(await listOrgs(callerContext(c)), 200);
  });
}
