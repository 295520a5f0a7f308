import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { ETAG_HEADER } from "../../openapi/conditional";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { OidcTrustCreateBody } from "../../schemas/oidc-writes";
import { createOidcTrust } from "../../services/oidc/trusts";
import { OidcTrustSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/oidc-trusts",
    operationId: "createOidcTrust",
    lostAnswer: { rebuild: "record", from: "/v1/oidc-trusts/{target}" },
    tags: ["OpenID Connect"],
    summary: "Trust an OpenID Connect issuer",
    description:
      "Lets CI runs of an identity provider (GitHub Actions, GitLab, any OpenID Connect issuer) exchange their ID " +
      "tokens for short-lived keys (`POST /v1/oidc/token`) whose tokens match `audience` and every condition. The " +
      "keys act as your account with `scopes` and `project_ids` (default: the calling key's; more is `403 forbidden`, " +
      "one `cause` per field) and are made under the calling key (`parent_id`): revoking it revokes them. Org role " +
      "`owner` or `admin` with a key not restricted to projects (else `403 unauthorized`). docs/ci.md shows the " +
      "GitHub Actions side.",
    request: { body: jsonBody(OidcTrustCreateBody) },
    responses: {
      201: {
        ...jsonContent(OidcTrustSchema, "The new trust."),
        headers: { ...LOCATION_HEADER, ...ETAG_HEADER },
      },
    },
  });
  app.openapi(route, async (c) => {
    const { created, etag } = await createOidcTrust(callerContext(c), c.req.valid("json"));
    c.header("ETag", etag);
    c.header("Location", `/v1/oidc-trusts/${created.id}`);
    return c.json(created, 201);
  });
}
