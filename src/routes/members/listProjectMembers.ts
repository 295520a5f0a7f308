import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listProjectMembers, memberFilterKey } from "../../services/members/members";
import { memberListQuery, memberListSchema, ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/members",
    operationId: "listProjectMembers",
    tags: ["Project members"],
    summary: "List the members of a project",
    description: "Needs the project role `viewer` or above. `role` filters by project role.",
    request: { params: ProjectParams, query: memberListQuery() },
    responses: { 200: jsonContent(memberListSchema(), "A page of members.") },
  });
  app.openapi(route, async (c) => {
    const { role, ...list } = c.req.valid("query");
    const page = pageRequest(list, memberFilterKey(role));
    const { project_id } = c.req.valid("param");
    return c.json(await listProjectMembers(callerContext(c), project_id, page, role), 200);
  });
}
