import type { OpenAPIHono } from "@hono/zod-openapi";
import { createDb } from "../../db/client";
import type { AppEnv } from "../../env";
import { defineRoute, jsonContent } from "../../http/openapi";
import { listIntegrations } from "../../services/integrations";
import { IntegrationListSchema, ProjectParams } from "./schema";

export const listIntegrationsRoute = defineRoute({
  method: "get",
  path: "/v1/projects/{project_id}/notification-integrations",
  operationId: "listIntegrations",
  tags: ["Notification integrations"],
  summary: "List the notification integrations of a project",
  description: "Every integration of the project, oldest first, in one page (`has_more` is always false).",
  request: { params: ProjectParams },
  responses: { 200: jsonContent(IntegrationListSchema, "The project's integrations.") },
});

export function registerListIntegrations(app: OpenAPIHono<AppEnv>) {
  app.openapi(listIntegrationsRoute, async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(await listIntegrations(createDb(c.env.DB), c.get("identity"), project_id), 200);
  });
}
