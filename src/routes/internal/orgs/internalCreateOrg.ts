import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { OrganizationSchema } from "../../../schemas/organization";
import { InternalOrgCreateBody } from "../../../schemas/organization-writes";
import { createOrg } from "../../../services/orgs/orgs";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/orgs",
    operationId: "internalCreateOrg",
    description:
      "An organization with no member yet, in the organization database `database` names or one chosen for it.",
    request: { body: jsonBody(InternalOrgCreateBody) },
    responses: { 201: jsonContent(OrganizationSchema, "The new organization.") },
  });
  app.openapi(route, async (c) => c.json(await createOrg(c.get("ctx"), c.req.valid("json")), 201));
}
