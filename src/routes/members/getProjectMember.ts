import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getProjectMember } from "../../services/members/members";
import { MemberParams, MemberSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/members/{member_id}",
    operationId: "getProjectMember",
    tags: ["Project members"],
    summary: "Read a project member",
    description: "`member_id` is the member's account ID. Needs the project role `viewer` or above.",
    request: { params: MemberParams },
    responses: { 200: jsonContent(MemberSchema, "The member.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, member_id } = c.req.valid("param");
    return c.json(await getProjectMember(callerContext(c), project_id, member_id), 200);
  });
}
