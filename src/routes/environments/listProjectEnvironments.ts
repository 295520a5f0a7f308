import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listProjectEnvironments } from "../../services/environments/environments";
import { environmentListSchema, ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/environments",
    operationId: "listProjectEnvironments",
    tags: ["Environments"],
    summary: "List a project's environments",
    description:
      "Each with `current_deployment_id` (its latest succeeded deployment) and `config_pending`. Keyset-paginated. " +
      "Project role `viewer` or above.",
    request: { params: ProjectParams, query: listQuery() },
    responses: { 200: jsonContent(environmentListSchema(), "A page of environments.") },
  });
  app.openapi(route, async (c) => {
    const { project_id } = c.req.valid("param");
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listProjectEnvironments(callerContext(c), project_id, page), 200);
  });
}
