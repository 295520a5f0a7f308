/** Internal API: the engine creates deployments and reports their progress (API_CONTRACT §9). */

import type { OpenAPIHono } from "@hono/zod-openapi";
import { createDb } from "../../db/client";
import type { AppEnv } from "../../env";
import { loggableError } from "../../http/errors";
import { idParams, jsonBody, jsonContent } from "../../http/openapi";
import { createDeployment, updateDeploymentStatus } from "../../services/deployments";
import { publishEvent } from "../../services/events";
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
      return c.json(await createDeployment(createDb(c.env.DB), environment_id, c.req.valid("json")), 201);
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
      const { deployment, event } = await updateDeploymentStatus(createDb(c.env.DB), id, status, stacks);
      // The event is committed with the transition; delivery never holds up the engine.
      // If the send fails the event stays unpublished in D1, and the consumer's sweep resends it.
      if (event) {
        c.executionCtx.waitUntil(
          publishEvent(c.env.EVENTS, event.id).catch((err: unknown) =>
            console.error(
              JSON.stringify({ msg: "event publish failed", event_id: event.id, error: loggableError(err) }),
            ),
          ),
        );
      }
      return c.json(deployment, 200);
    },
  );
}
