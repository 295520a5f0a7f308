import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { CreatedApiKeySchema } from "../../../schemas/organization";
import { ApiKeyCreateBody } from "../../../schemas/organization-writes";
import { issueApiKey } from "../../../services/api-keys/api-keys";
import { OrgIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/orgs/{org_id}/api-keys",
    operationId: "internalCreateApiKey",
    description:
      "A key acting as `account_id`, issued by `created_by` (an owner or admin of the organization). " +
      "Unknown organization `404`.",
    request: { params: OrgIdParams, body: jsonBody(ApiKeyCreateBody) },
    responses: { 201: jsonContent(CreatedApiKeySchema, "The new key, with its secret (shown only here).") },
  });
  app.openapi(route, async (c) => {
    const { created, etag } = await issueApiKey(
      c.get("ctx"),
      c.req.valid("param").org_id,
      c.req.valid("json"),
    );
    // It carries the key itself: no cache may keep it. Its ETag is the record's, as a GET of the key
    // shows it, like the public create's.
    c.header("cache-control", "no-store");
    c.header("ETag", etag);
    return c.json(created, 201);
  });
}
