import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { OrganizationSchema } from "../../../schemas/organization";
import { InternalOrgCreateBody } from "../../../schemas/organization-writes";
import { createOrg } from "../../../services/orgs/orgs";

const internalCreateOrgRoute = defineInternalRoute({
  method: "post",
  path: "/internal/v1/orgs",
  operationId: "internalCreateOrg",
  description:
    "An organization with no member yet, in the organization database `database` names or one chosen for it.",
  request: { body: jsonBody(InternalOrgCreateBody) },
  responses: { 201: jsonContent(OrganizationSchema, "The new organization.") },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(internalCreateOrgRoute, async (c) =>
    c.json(await createOrg(c.get("ctx"), c.req.valid("json")), 201),
  );
}
