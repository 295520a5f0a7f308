import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { OrgLimitsSchema } from "../../../schemas/limits";
import { OrgLimitsBody } from "../../../schemas/limits-writes";
import { replaceOrgLimits } from "../../../services/orgs/limits";
import { OrgIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "put",
    path: "/internal/v1/orgs/{org_id}/limits",
    operationId: "internalReplaceOrgLimits",
    description:
      "Any of the limits, each an integer 0–1,000,000; those left out keep their value. A lower limit removes " +
      "nothing. Unknown organization `404`.",
    request: { params: OrgIdParams, body: jsonBody(OrgLimitsBody) },
    responses: { 200: jsonContent(OrgLimitsSchema, "The organization's limits as the change left them.") },
  });
  app.openapi(route, async (c) =>
    c.json(await replaceOrgLimits(c.get("ctx"), c.req.valid("param").org_id, c.req.valid("json")), 200),
  );
}
