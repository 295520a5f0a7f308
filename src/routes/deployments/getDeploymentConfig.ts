import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { DeploymentConfigRecordSchema } from "../../schemas/config";
import { getDeploymentConfig } from "../../services/deployments/config";
import { DeploymentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/deployments/{id}/config",
    operationId: "getDeploymentConfig",
    tags: ["Deployments"],
    summary: "The configuration a deployment runs with",
    description:
      "The variables (names and types, never values) of the environment and of each component exactly as their " +
      "scopes held them right after the versions the deployment pinned when it was created: what the engine " +
      "deploys. `404` for a deployment made before configurations were recorded (`config` null). Project role " +
      "`viewer` or above.",
    request: { params: DeploymentParams },
    responses: { 200: jsonContent(DeploymentConfigRecordSchema, "The pinned configuration.") },
  });
  app.openapi(route, async (c) => {
    return c.json(await getDeploymentConfig(callerContext(c), c.req.valid("param").id), 200);
  });
}
