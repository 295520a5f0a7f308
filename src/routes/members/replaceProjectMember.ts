import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { MemberReplaceSchema } from "../../schemas/member-writes";
import { replaceProjectMember } from "../../services/members/members";
import { MemberParams, MemberSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "put",
    path: "/v1/projects/{project_id}/members/{member_id}",
    operationId: "replaceProjectMember",
    lostAnswer: { rebuild: "record", from: "request-path" },
    tags: ["Project members"],
    summary: "Replace a member's project role",
    description:
      "Demoting the project's last `owner` is `409 conflict`. Needs the project role `owner`. " +
      "Organization owners and admins act as project owners without being counted as one.",
    request: { params: MemberParams, body: jsonBody(MemberReplaceSchema) },
    responses: { 200: jsonContent(MemberSchema, "The member with its new role.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, member_id } = c.req.valid("param");
    const member = await replaceProjectMember(callerContext(c), project_id, member_id, c.req.valid("json"));
    return c.json(member, 200);
  });
}
