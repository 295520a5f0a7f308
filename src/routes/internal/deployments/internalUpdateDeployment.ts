import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { DeploymentSchema } from "../../../schemas/deployment";
import { DeploymentUpdateBody } from "../../../schemas/deployment-writes";
import { updateDeployment } from "../../../services/deployments/transitions";
import { IdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "patch",
    path: "/internal/v1/deployments/{id}",
    operationId: "internalUpdateDeployment",
    description:
      "Moves the deployment (and the given stacks) along the state machine; an illegal move, or losing a " +
      "race with another update, is `409 conflict`. Reporting the current non-final status again is " +
      "allowed, so that single stacks can progress. Entering `in_progress`, `succeeded` or `failed` " +
      "records a `deployment.*` event.",
    request: { params: IdParams, body: jsonBody(DeploymentUpdateBody) },
    responses: { 200: jsonContent(DeploymentSchema, "The updated deployment.") },
  });
  app.openapi(route, async (c) => {
    return c.json(await updateDeployment(c.get("ctx"), c.req.valid("param").id, c.req.valid("json")), 200);
  });
}
