import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { removeProjectMember } from "../../services/members/members";
import { MemberParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/projects/{project_id}/members/{member_id}",
    operationId: "removeProjectMember",
    lostAnswer: { rebuild: "status" },
    tags: ["Project members"],
    summary: "Remove a member from a project",
    description: "Removing the project's last `owner` is `409 conflict`. Needs the project role `owner`.",
    request: { params: MemberParams },
    responses: { 204: { description: "Removed." } },
  });
  app.openapi(route, async (c) => {
    const { project_id, member_id } = c.req.valid("param");
    await removeProjectMember(callerContext(c), project_id, member_id);
    return c.body(null, 204);
  });
}
