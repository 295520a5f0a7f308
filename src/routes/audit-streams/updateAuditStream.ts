import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { AuditStreamUpdateSchema } from "../../schemas/audit-stream-writes";
import { updateAuditStream } from "../../services/audit/streams";
import { AuditStreamSchema, StreamParams, WHO_MAY } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "patch",
    path: "/v1/audit-streams/{id}",
    operationId: "updateAuditStream",
    lostAnswer: { rebuild: "record", from: "request-path" },
    tags: ["Audit log"],
    summary: "Rename, redirect, pause or resume an audit log stream",
    description: `${WHO_MAY} \`enabled: true\` resumes at \`delivered_through + 1\`.`,
    request: { params: StreamParams, body: jsonBody(AuditStreamUpdateSchema) },
    responses: { 200: jsonContent(AuditStreamSchema, "The stream as the change left it.") },
  });
  app.openapi(route, async (c) =>
    c.json(await updateAuditStream(callerContext(c), c.req.valid("param").id, c.req.valid("json")), 200),
  );
}
