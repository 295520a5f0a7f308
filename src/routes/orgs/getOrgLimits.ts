import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getOrgLimits } from "../../services/orgs/limits";
import { OrgLimitsSchema, OrgParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/orgs/{org_id}/limits",
    operationId: "getOrgLimits",
    tags: ["Organizations"],
    summary: "Read your organization's limits and what each counts now",
    description:
      "What the organization may hold and how much it holds now; any key of the organization may read them. " +
      "A request that would exceed a limit, whatever its route, is `409 conflict` with `cause " +
      '[{path: "limits.<name>"}]` and changes nothing. A delete frees its count at once; a lower limit removes nothing.',
    request: { params: OrgParams },
    responses: { 200: jsonContent(OrgLimitsSchema, "The organization's limits, in the order above.") },
  });
  app.openapi(route, async (c) =>
    c.json(await getOrgLimits(callerContext(c), c.req.valid("param").org_id), 200),
  );
}
