import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { auditPageRequest, listOrgAuditLog } from "../../services/audit/log";
import { auditEntryListSchema, OrgAuditLogQuerySchema, OrgParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/orgs/{org_id}/audit-log",
    operationId: "listOrgAuditLog",
    tags: ["Audit log"],
    summary: "List the audit log of your organization",
    description:
      "Who did what: one entry per successful change, variable reveal, and API key creation or revocation. " +
      "Needs the organization role `owner` or `admin` (else `403 unauthorized`); any organization but your " +
      "own is `404`. A key restricted to some projects (`project_ids`) acts as an org member here whatever " +
      "its account's role: `403 unauthorized` (its projects' own lists remain). Entries are immutable and " +
      "kept 400 days. Internal creates of an account belong to no organization and appear in no list.",
    request: { params: OrgParams, query: OrgAuditLogQuerySchema },
    responses: { 200: jsonContent(auditEntryListSchema(), "A page of audit entries.") },
  });
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const filter = {
      actions: query.action,
      actorAccountId: query.actor_account_id,
      projectId: query.project_id,
    };
    const page = auditPageRequest(query, filter);
    return c.json(await listOrgAuditLog(callerContext(c), c.req.valid("param").org_id, filter, page), 200);
  });
}
