import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { AuditStreamReplaySchema } from "../../schemas/audit-stream-writes";
import { replayAuditStream } from "../../services/audit/streams";
import { AuditStreamSchema, StreamParams, WHO_MAY } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/audit-streams/{id}/replay",
    operationId: "replayAuditStream",
    lostAnswer: { rebuild: "none", why: "the stream has moved on from the position the replay set" },
    tags: ["Audit log"],
    summary: "Send an audit log stream's entries again from a sequence",
    description: `${WHO_MAY} \`from_sequence\` is 1 to \`delivered_through + 1\` (else \`400\`).`,
    request: { params: StreamParams, body: jsonBody(AuditStreamReplaySchema) },
    responses: { 202: jsonContent(AuditStreamSchema, "The stream, back at `from_sequence - 1`.") },
  });
  app.openapi(route, async (c) =>
    c.json(await replayAuditStream(callerContext(c), c.req.valid("param").id, c.req.valid("json")), 202),
  );
}
