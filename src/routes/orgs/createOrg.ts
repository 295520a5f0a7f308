import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { OrganizationSchema } from "../../schemas/organization";
import { OrganizationCreateSchema } from "../../schemas/organization-writes";
import { createOrg } from "../../services/orgs/orgs";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/orgs",
    operationId: "createOrg",
    lostAnswer: { rebuild: "none", why: "an organization has no read of its own" },
    tags: ["Organizations"],
    summary: "Create an organization",
    description:
      "Your account becomes the new organization's `owner`. Acting in it needs a key issued for that organization. " +
      "A key restricted to some projects (`project_ids`) may not (`403 unauthorized`). " +
      "Rate-limited by the `orgs-create` policy (10 per minute).",
    rateLimit: "orgs-create",
    request: { body: jsonBody(OrganizationCreateSchema) },
    responses: { 201: jsonContent(OrganizationSchema, "The new organization.") },
  });
  app.openapi(route, async (c) => {
    return c.json(await createOrg(callerContext(c), c.req.valid("json")), 201);
  });
}
