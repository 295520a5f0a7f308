import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listIntegrations } from "../../services/integrations/integrations";
import { integrationListSchema, ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/notification-integrations",
    operationId: "listIntegrations",
    tags: ["Notification integrations"],
    summary: "List the notification integrations of a project",
    description:
      "The project's integrations, with the shared pagination (newest first by default). A project has few " +
      "integrations, so this is usually one page with `has_more: false`.",
    request: { params: ProjectParams, query: listQuery() },
    responses: { 200: jsonContent(integrationListSchema(), "The project's integrations.") },
  });
  app.openapi(route, async (c) => {
    const { project_id } = c.req.valid("param");
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listIntegrations(callerContext(c), project_id, page), 200);
  });
}
