import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getDeployment } from "../../services/deployments/deployments";
import { DeploymentParams, DeploymentSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/deployments/{id}",
    operationId: "getDeployment",
    tags: ["Deployments"],
    summary: "Read a deployment",
    description: "Needs the project role `viewer` or above.",
    request: { params: DeploymentParams },
    responses: { 200: jsonContent(DeploymentSchema, "The deployment.") },
  });
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await getDeployment(callerContext(c), id), 200);
  });
}
