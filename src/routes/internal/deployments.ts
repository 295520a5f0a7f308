/** Internal API: the engine creates deployments and reports their progress (API_CONTRACT §9). */

import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { idParams, jsonBody, jsonContent } from "../../http/openapi";
import { createDeployment, updateDeploymentStatus } from "../../services/deployments";
import { DeploymentCreateBody, DeploymentSchema, DeploymentUpdateBody } from "../deployments/schema";
import { defineInternalRoute } from "./schema";

export function registerInternalDeploymentsRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/environments/{environment_id}/deployments",
      description: "A `queued` deployment; every stack must belong to the environment, else `400 bad_input`.",
      request: { params: idParams("environment_id"), body: jsonBody(DeploymentCreateBody) },
      responses: { 201: jsonContent(DeploymentSchema, "The new deployment.") },
    }),
    async (c) => {
      const { environment_id } = c.req.valid("param");
      return c.json(await createDeployment(c.get("ctx"), environment_id, c.req.valid("json")), 201);
    },
  );

  app.openapi(
    defineInternalRoute({
      method: "patch",
      path: "/internal/v1/deployments/{id}",
      description:
        "Moves the deployment (and the given stacks) along the state machine; an illegal move, or losing a " +
        "race with another update, is `409 conflict`. Reporting the current non-final status again is " +
        "allowed, so that single stacks can progress. Entering `in_progress`, `succeeded` or `failed` " +
        "records a `deployment.*` event.",
      request: { params: idParams("id"), body: jsonBody(DeploymentUpdateBody) },
      responses: { 200: jsonContent(DeploymentSchema, "The updated deployment.") },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { status, stacks } = c.req.valid("json");
      return c.json(await updateDeploymentStatus(c.get("ctx"), id, status, stacks), 200);
    },
  );
}
