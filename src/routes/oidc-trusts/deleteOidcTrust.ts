import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { deleteOidcTrust } from "../../services/oidc/trusts";
import { OidcTrustParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/oidc-trusts/{id}",
    operationId: "deleteOidcTrust",
    lostAnswer: { rebuild: "status" },
    tags: ["OpenID Connect"],
    summary: "Delete an OpenID Connect trust",
    description:
      "Later exchanges under it are `401`, and every key it issued, with the keys made from them, is revoked " +
      "(refused everywhere within 60 s). Org role `owner` or `admin` with a key not restricted to projects (else " +
      "`403 unauthorized`); a trust the key cannot see is `404`.",
    request: { params: OidcTrustParams },
    responses: { 204: { description: "Deleted; its keys revoked." } },
  });
  app.openapi(route, async (c) => {
    await deleteOidcTrust(callerContext(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
