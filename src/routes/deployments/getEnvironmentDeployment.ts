import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getEnvironmentDeployment } from "../../services/deployments/deployments";
import { DeploymentSchema, EnvironmentDeploymentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/deployments/{id}",
    operationId: "getEnvironmentDeployment",
    tags: ["Deployments"],
    summary: "Read a deployment of an environment",
    description:
      "A deployment of another environment is `404 not_found`. Needs the project role `viewer` or above.",
    request: { params: EnvironmentDeploymentParams },
    responses: { 200: jsonContent(DeploymentSchema, "The deployment.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id, id } = c.req.valid("param");
    return c.json(await getEnvironmentDeployment(callerContext(c), environment_id, id), 200);
  });
}
