import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER, NO_STORE_HEADER } from "../../openapi/components";
import { ETAG_HEADER } from "../../openapi/conditional";
import { defineRoute, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { ApiKeyDeriveBody } from "../../schemas/organization-writes";
import { createApiKey } from "../../services/api-keys/create";
import { NewApiKeySchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/api-keys",
    operationId: "createApiKey",
    lostAnswer: { rebuild: "none", why: "the new key is shown once" },
    tags: ["API keys"],
    summary: "Make a narrower key",
    description:
      "A key acting as your account that can do at most what the calling key can, for at most as long " +
      "(`parent_id`: the calling key). Fields left out are the calling key's own. Exceeding it (a scope it " +
      "lacks, `*` from a key without `*`, a project outside its own or `null` from a restricted key, a later " +
      "or no expiry under an expiring one) is `403 forbidden` with one `cause` per field; nothing is made. " +
      "Org role `owner` or `admin` (else `403 unauthorized`). Only this answer shows `key` (`no-store`). " +
      "Policy `keys-create` (10 per minute).",
    rateLimit: "keys-create",
    request: { body: optionalJsonBody(ApiKeyDeriveBody) },
    responses: {
      201: {
        ...jsonContent(NewApiKeySchema, "The new key's record, with the key itself."),
        headers: { ...LOCATION_HEADER, ...NO_STORE_HEADER, ...ETAG_HEADER },
      },
    },
  });
  app.openapi(route, async (c) => {
    const { created, etag } = await createApiKey(callerContext(c), c.req.valid("json"));
    // It carries the key itself: no cache may keep it. Its ETag is the record's, as a GET shows
    // it (without the key), so that a revoke can send it as If-Match at once.
    c.header("cache-control", "no-store");
    c.header("ETag", etag);
    c.header("Location", `/v1/api-keys/${created.id}`);
    return c.json(created, 201);
  });
}
