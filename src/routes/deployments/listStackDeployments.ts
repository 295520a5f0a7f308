import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listStackDeployments, statusFilterKey } from "../../services/deployments/deployments";
import { deploymentListQuery, deploymentListSchema, StackParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/stacks/{stack_id}/deployments",
    operationId: "listStackDeployments",
    tags: ["Deployments"],
    summary: "List the deployments that include a stack",
    description: "Needs the project role `viewer` or above.",
    request: { params: StackParams, query: deploymentListQuery() },
    responses: { 200: jsonContent(deploymentListSchema(), "A page of deployments.") },
  });
  app.openapi(route, async (c) => {
    const { stack_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const page = pageRequest(query, statusFilterKey(query.status));
    const result = await listStackDeployments(callerContext(c), stack_id, { statuses: query.status }, page);
    return c.json(result, 200);
  });
}
