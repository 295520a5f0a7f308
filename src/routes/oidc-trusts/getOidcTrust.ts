import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getOidcTrust } from "../../services/oidc/trusts";
import { OidcTrustParams, OidcTrustSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/oidc-trusts/{id}",
    operationId: "getOidcTrust",
    tags: ["OpenID Connect"],
    summary: "Read an OpenID Connect trust",
    description: "Visible as in `listOidcTrusts`, else `404`.",
    request: { params: OidcTrustParams },
    responses: { 200: jsonContent(OidcTrustSchema, "The trust.") },
  });
  app.openapi(route, async (c) => c.json(await getOidcTrust(callerContext(c), c.req.valid("param").id), 200));
}
