import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { LogLinesAnswerSchema, LogLinesBody } from "../../../schemas/timeline-writes";
import { appendDeploymentLogs } from "../../../services/deployments/logs";
import { IdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/deployments/{id}/logs",
    operationId: "internalAppendDeploymentLogs",
    description:
      "Appends 1–1000 log lines to the deployment's timeline, numbered in order after its last entry: all " +
      "or none. A line's `stack_id` must be one of the deployment's stacks (else `400`); a final deployment, " +
      "or a timeline that would pass 100,000 entries, is `409`.",
    request: { params: IdParams, body: jsonBody(LogLinesBody) },
    responses: { 202: jsonContent(LogLinesAnswerSchema, "The numbers the lines were given.") },
  });
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await appendDeploymentLogs(c.get("ctx"), id, c.req.valid("json")), 202);
  });
}
