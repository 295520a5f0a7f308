import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listDeployments, statusFilterKey } from "../../services/deployments/deployments";
import { deploymentListQuery, deploymentListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/deployments",
    operationId: "listDeployments",
    tags: ["Deployments"],
    summary: "List the deployments of every project you may see",
    description:
      "Organization owners and admins see every project of the organization; others the projects they are members of.",
    request: { query: deploymentListQuery() },
    responses: { 200: jsonContent(deploymentListSchema(), "A page of deployments.") },
  });
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const page = pageRequest(query, statusFilterKey(query.status));
    return c.json(await listDeployments(callerContext(c), { statuses: query.status }, page), 200);
  });
}
