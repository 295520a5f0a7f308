import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { recordEtag } from "../../http/etag";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER, NO_STORE_HEADER } from "../../openapi/components";
import { ETAG_HEADER } from "../../openapi/conditional";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { AuditStreamCreateSchema } from "../../schemas/audit-stream-writes";
import { createAuditStream } from "../../services/audit/streams";
import { CreatedAuditStreamSchema, OrgParams, WHO_MAY } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/orgs/{org_id}/audit-streams",
    operationId: "createAuditStream",
    lostAnswer: { rebuild: "none", why: "the signing secret is shown once" },
    tags: ["Audit log"],
    summary: "Stream the audit log to your own systems",
    description:
      `${WHO_MAY} Batches of up to 100 consecutive entries, \`application/x-ndjson\`, signed as Standard Webhooks ` +
      "(`webhook-id` `<stream id>.<first sequence>`), each after the previous one was acknowledged with a `2xx`.",
    request: { params: OrgParams, body: jsonBody(AuditStreamCreateSchema) },
    responses: {
      201: {
        ...jsonContent(CreatedAuditStreamSchema, "The new stream, with its signing secret."),
        headers: { ...LOCATION_HEADER, ...NO_STORE_HEADER, ...ETAG_HEADER },
      },
    },
  });
  app.openapi(route, async (c) => {
    const created = await createAuditStream(
      callerContext(c),
      c.req.valid("param").org_id,
      c.req.valid("json"),
    );
    const { signing_secret: _secret, ...record } = created;
    // It carries the signing secret: no cache may keep it. Its ETag is the record's, as a GET shows it.
    c.header("cache-control", "no-store");
    c.header("ETag", await recordEtag(record));
    c.header("Location", `/v1/audit-streams/${created.id}`);
    return c.json(created, 201);
  });
}
