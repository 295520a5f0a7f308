import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getIntegration } from "../../services/integrations/integrations";
import { IntegrationParams, IntegrationSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/notification-integrations/{integration_id}",
    operationId: "getIntegration",
    tags: ["Notification integrations"],
    summary: "Read a notification integration",
    description: "The signing secret is never shown again after creation.",
    request: { params: IntegrationParams },
    responses: { 200: jsonContent(IntegrationSchema, "The integration.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    return c.json(await getIntegration(callerContext(c), project_id, integration_id), 200);
  });
}
