import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { DeploymentSchema } from "../../../schemas/deployment";
import { DeploymentCreateBody } from "../../../schemas/deployment-writes";
import { createEngineDeployment } from "../../../services/deployments/create";
import { EnvironmentIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/environments/{environment_id}/deployments",
    operationId: "internalCreateDeployment",
    description: "A `queued` deployment; every stack must belong to the environment, else `400 bad_input`.",
    request: { params: EnvironmentIdParams, body: jsonBody(DeploymentCreateBody) },
    responses: { 201: jsonContent(DeploymentSchema, "The new deployment.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(await createEngineDeployment(c.get("ctx"), environment_id, c.req.valid("json")), 201);
  });
}
