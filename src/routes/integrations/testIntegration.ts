/** API_CONTRACT §13: one signed delivery now, answered directly. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { TestSendBodySchema, TestSendResultSchema } from "../../schemas/integration-writes";
import { testIntegration } from "../../services/integrations/operator";
import { INTEGRATION_PATH, IntegrationParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: `${INTEGRATION_PATH}/test`,
    operationId: "testIntegration",
    lostAnswer: { rebuild: "none", why: "a test send's outcome is not kept" },
    tags: ["Notification integrations"],
    summary: "Send a test delivery now",
    description:
      "Sends one signed delivery of the given event type (default `deployment.succeeded`) at once and answers what " +
      "the receiver did. The payload's `data` is `{test: true, project_id}`; the `webhook-id` is fresh. 15 s timeout, " +
      "redirects not followed, not retried, not recorded as an event or a delivery, and it never disables the " +
      "integration (a disabled one can be tested). Needs the project role `contributor` or above.",
    request: { params: IntegrationParams, body: optionalJsonBody(TestSendBodySchema) },
    responses: { 200: jsonContent(TestSendResultSchema, "What the receiver did.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    const result = await testIntegration(callerContext(c), project_id, integration_id, c.req.valid("json"));
    return c.json(result, 200);
  });
}
