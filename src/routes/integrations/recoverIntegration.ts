/** API_CONTRACT §13: re-send every failed or skipped delivery of a time range (and every stuck one). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { RecoverBodySchema, RecoverResultSchema } from "../../schemas/integration-writes";
import { recoverIntegration } from "../../services/integrations/redelivery";
import { INTEGRATION_PATH, IntegrationParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: `${INTEGRATION_PATH}/recover`,
    operationId: "recoverIntegration",
    lostAnswer: { rebuild: "none", why: "it answers a count" },
    tags: ["Notification integrations"],
    summary: "Re-send failed, skipped and stuck deliveries of a time range",
    description:
      "Re-queues every `failed` or `skipped` delivery of this integration whose event was created between `since` " +
      "and `until` (both included; `until` defaults to now), and every one still `pending` more than a minute " +
      "after its `next_attempt_at` (left behind by a failure), all of them in one call, oldest deliveries first. " +
      "Each starts a new series of attempts (the usual retry schedule) with its event's original `webhook-id` " +
      "(even while the integration is disabled). Needs `contributor` or above.",
    request: { params: IntegrationParams, body: jsonBody(RecoverBodySchema) },
    responses: { 202: jsonContent(RecoverResultSchema, "How many deliveries were queued.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    const result = await recoverIntegration(
      callerContext(c),
      project_id,
      integration_id,
      c.req.valid("json"),
    );
    return c.json(result, 202);
  });
}
