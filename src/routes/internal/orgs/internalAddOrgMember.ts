import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { OrgMemberSchema } from "../../../schemas/organization";
import { OrgMemberBody } from "../../../schemas/organization-writes";
import { addOrgMember } from "../../../services/orgs/orgs";
import { OrgIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/orgs/{org_id}/members",
    operationId: "internalAddOrgMember",
    description: "Unknown organization `404`, unknown account `400`, an account already a member `409`.",
    request: { params: OrgIdParams, body: jsonBody(OrgMemberBody) },
    responses: { 201: jsonContent(OrgMemberSchema, "The new membership.") },
  });
  app.openapi(route, async (c) => {
    return c.json(await addOrgMember(c.get("ctx"), c.req.valid("param").org_id, c.req.valid("json")), 201);
  });
}
