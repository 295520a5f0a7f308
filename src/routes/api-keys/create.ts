import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER, NO_STORE_HEADER } from "../../openapi/components";
import { defineRoute, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { createApiKey } from "../../services/api-keys/create";
import { ApiKeyDeriveBody, NewApiKeySchema } from "./schema";

export const createApiKeyRoute = defineRoute({
  method: "post",
  path: "/v1/api-keys",
  operationId: "createApiKey",
  tags: ["API keys"],
  summary: "Make a narrower key",
  description:
    "Makes a key that acts as your account in your organization and can do at most what the calling key " +
    "can, for at most as long (a CI key, say), with `parent_id` the calling key. Every field is optional; one " +
    "left out is the calling key's own. `scopes` must all be held by the calling key (`*` only from a `*` " +
    "key); `project_ids` must be within the calling key's when it is restricted (a restricted key cannot " +
    "make an unrestricted one; `null` asks for every project); `expires_at` must be in the future (else " +
    "`400`) and no later than the calling key's expiry (`null`: never). Exceeding the calling key is " +
    "`403 forbidden` with one `cause` item per field that exceeds (`scopes`, `project_ids`, `expires_at`), " +
    "and nothing is made. Revoking a key revokes every key made from it. Needs the organization role " +
    "`owner` or `admin` (else `403 unauthorized`). The answer — and only this one — carries the key " +
    "(`key`), and is marked `Cache-Control: no-store`. Rate-limited by the `keys-create` policy (10 per minute).",
  rateLimit: "keys-create",
  request: { body: optionalJsonBody(ApiKeyDeriveBody, "Every field optional: `{}` copies the calling key.") },
  responses: {
    201: {
      ...jsonContent(NewApiKeySchema, "The new key's record, with the key itself."),
      headers: { ...LOCATION_HEADER, ...NO_STORE_HEADER },
    },
  },
});

export function registerCreateApiKey(app: OpenAPIHono<AppEnv>) {
  app.openapi(createApiKeyRoute, async (c) => {
    const created = await createApiKey(callerContext(c), c.req.valid("json"));
    // It carries the key itself: no cache may keep it (and so it gets no ETag).
    c.header("cache-control", "no-store");
    c.header("Location", `/v1/api-keys/${created.id}`);
    return c.json(created, 201);
  });
}
