import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { deleteAuditStream } from "../../services/audit/streams";
import { StreamParams, WHO_MAY } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/audit-streams/{id}",
    operationId: "deleteAuditStream",
    lostAnswer: { rebuild: "status" },
    tags: ["Audit log"],
    summary: "Delete an audit log stream",
    description: `${WHO_MAY} Nothing more is sent.`,
    request: { params: StreamParams },
    responses: { 204: { description: "Deleted." } },
  });
  app.openapi(route, async (c) => {
    await deleteAuditStream(callerContext(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
