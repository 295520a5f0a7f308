import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { MemberAddResultSchema, MemberAddSchema } from "../../schemas/member-writes";
import { addProjectMembers } from "../../services/members/members";
import { ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/projects/{project_id}/members",
    operationId: "addProjectMembers",
    lostAnswer: { rebuild: "none", why: "it answers a list of members" },
    tags: ["Project members"],
    summary: "Add accounts of the organization to a project",
    description:
      "All or nothing. Accounts that are not members of the project's organization are `400 bad_input` " +
      "(each named in `cause`, with its `path` and `account_id`); any account that is already a member makes " +
      "the whole request `409 conflict`. Needs the project role `owner`.",
    request: { params: ProjectParams, body: jsonBody(MemberAddSchema) },
    responses: { 201: jsonContent(MemberAddResultSchema, "The new members, in request order.") },
  });
  app.openapi(route, async (c) => {
    const data = await addProjectMembers(
      callerContext(c),
      c.req.valid("param").project_id,
      c.req.valid("json"),
    );
    return c.json({ data }, 201);
  });
}
