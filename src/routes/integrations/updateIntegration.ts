import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { IntegrationUpdateSchema } from "../../schemas/integration-writes";
import { updateIntegration } from "../../services/integrations/integrations";
import { IntegrationParams, IntegrationSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "patch",
    path: "/v1/projects/{project_id}/notification-integrations/{integration_id}",
    operationId: "updateIntegration",
    lostAnswer: { rebuild: "record", from: "request-path" },
    tags: ["Notification integrations"],
    summary: "Update a notification integration",
    description:
      "Merges the given `configuration` flags and optionally replaces `url`. A body with none of the fields " +
      "is `400 bad_input`. Needs the project role `contributor` or above.",
    request: { params: IntegrationParams, body: jsonBody(IntegrationUpdateSchema) },
    responses: { 200: jsonContent(IntegrationSchema, "The updated integration.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    const integration = await updateIntegration(
      callerContext(c),
      project_id,
      integration_id,
      c.req.valid("json"),
    );
    return c.json(integration, 200);
  });
}
