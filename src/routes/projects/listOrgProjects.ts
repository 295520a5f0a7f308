import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listOrgProjects } from "../../services/projects/reads";
import { OrgParams, projectListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/orgs/{org_id}/projects",
    operationId: "listOrgProjects",
    tags: ["Projects"],
    summary: "List the projects of an organization that you may see",
    description: "Only your own organization exists for you: any other `org_id` is `404 not_found`.",
    request: { params: OrgParams, query: listQuery() },
    responses: { 200: jsonContent(projectListSchema(), "A page of projects.") },
  });
  app.openapi(route, async (c) => {
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listOrgProjects(callerContext(c), c.req.valid("param").org_id, page), 200);
  });
}
