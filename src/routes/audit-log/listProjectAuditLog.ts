import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { auditPageRequest, listProjectAuditLog } from "../../services/audit/log";
import { auditEntryListSchema, ProjectAuditLogQuerySchema, ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/audit-log",
    operationId: "listProjectAuditLog",
    tags: ["Audit log"],
    summary: "List the audit log of a project",
    description:
      "The project's entries (see the organization's audit log). Needs the project role `owner` (org owners " +
      "and admins act as one).",
    request: { params: ProjectParams, query: ProjectAuditLogQuerySchema },
    responses: { 200: jsonContent(auditEntryListSchema(), "A page of audit entries.") },
  });
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const projectId = c.req.valid("param").project_id;
    const filter = { actions: query.action, actorAccountId: query.actor_account_id };
    // The cursor is bound to the project too (§4): the organization's list filtered to this project
    // is the same list; another project's, or the unfiltered organization's, is not.
    const page = auditPageRequest(query, { ...filter, projectId });
    return c.json(await listProjectAuditLog(callerContext(c), projectId, filter, page), 200);
  });
}
