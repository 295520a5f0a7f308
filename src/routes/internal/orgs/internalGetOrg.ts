import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonContent } from "../../../openapi/define-route";
import { InternalOrganizationSchema } from "../../../schemas/move";
import { getInternalOrg } from "../../../services/moves/moves";
import { OrgIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "get",
    path: "/internal/v1/orgs/{org_id}",
    operationId: "internalGetOrg",
    description:
      "The organization, with `database`: the one out of `ORG_DATABASES` that holds it (API_CONTRACT §32).",
    request: { params: OrgIdParams },
    responses: { 200: jsonContent(InternalOrganizationSchema, "The organization and its database.") },
  });
  app.openapi(route, async (c) =>
    c.json(await getInternalOrg(c.get("ctx"), c.req.valid("param").org_id), 200),
  );
}
