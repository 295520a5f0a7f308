import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listEnvironmentDeployments, statusFilterKey } from "../../services/deployments/deployments";
import { deploymentListQuery, deploymentListSchema, EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/deployments",
    operationId: "listEnvironmentDeployments",
    tags: ["Deployments"],
    summary: "List the deployments of an environment",
    description: "Needs the project role `viewer` or above.",
    request: { params: EnvironmentParams, query: deploymentListQuery() },
    responses: { 200: jsonContent(deploymentListSchema(), "A page of deployments.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const page = pageRequest(query, statusFilterKey(query.status));
    const filter = { statuses: query.status };
    return c.json(await listEnvironmentDeployments(callerContext(c), environment_id, filter, page), 200);
  });
}
