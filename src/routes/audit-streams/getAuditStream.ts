import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getAuditStream } from "../../services/audit/streams";
import { AuditStreamSchema, StreamParams, WHO_MAY } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/audit-streams/{id}",
    operationId: "getAuditStream",
    tags: ["Audit log"],
    summary: "Read an audit log stream: how far its receiver has acknowledged",
    description: WHO_MAY,
    request: { params: StreamParams },
    responses: { 200: jsonContent(AuditStreamSchema, "The stream.") },
  });
  app.openapi(route, async (c) =>
    c.json(await getAuditStream(callerContext(c), c.req.valid("param").id), 200),
  );
}
