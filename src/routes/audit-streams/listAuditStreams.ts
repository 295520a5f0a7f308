import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listAuditStreams } from "../../services/audit/streams";
import { auditStreamListSchema, OrgParams, WHO_MAY } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/orgs/{org_id}/audit-streams",
    operationId: "listAuditStreams",
    tags: ["Audit log"],
    summary: "List your organization's audit log streams",
    description: WHO_MAY,
    request: { params: OrgParams, query: listQuery() },
    responses: { 200: jsonContent(auditStreamListSchema(), "A page of streams.") },
  });
  app.openapi(route, async (c) =>
    c.json(
      await listAuditStreams(
        callerContext(c),
        c.req.valid("param").org_id,
        pageRequest(c.req.valid("query")),
      ),
      200,
    ),
  );
}
