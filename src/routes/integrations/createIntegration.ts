import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER, NO_STORE_HEADER } from "../../openapi/components";
import { ETAG_HEADER } from "../../openapi/conditional";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { IntegrationCreateSchema } from "../../schemas/integration-writes";
import { createdIntegrationEtag, createIntegration } from "../../services/integrations/integrations";
import { CreatedIntegrationSchema, ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/projects/{project_id}/notification-integrations",
    operationId: "createIntegration",
    lostAnswer: { rebuild: "none", why: "the signing secret is shown once" },
    tags: ["Notification integrations"],
    summary: "Create a webhook integration",
    description:
      "Needs the project role `contributor` or above. The response — and only this one — carries " +
      "`signing_secret`, and is marked `Cache-Control: no-store`. The URL is stored normalized " +
      "(`https://Example.COM/a/../b` reads back as `https://example.com/b`). Deliveries follow Standard Webhooks: a POST of `{type, timestamp, data}` with the " +
      "headers `webhook-id` (the event ID, the same on every retry), `webhook-timestamp` and " +
      "`webhook-signature`. A non-2xx answer, a redirect, a timeout (15 s) or a network error is retried " +
      "after about 5 s, 5 min, 30 min, 2 h, 5 h and 10 h (longer if the receiver sends `Retry-After`).",
    request: { params: ProjectParams, body: jsonBody(IntegrationCreateSchema) },
    responses: {
      201: {
        ...jsonContent(CreatedIntegrationSchema, "The new integration, with its signing secret."),
        headers: { ...LOCATION_HEADER, ...NO_STORE_HEADER, ...ETAG_HEADER },
      },
    },
  });
  app.openapi(route, async (c) => {
    const integration = await createIntegration(
      callerContext(c),
      c.req.valid("param").project_id,
      c.req.valid("json"),
    );
    // It carries the signing secret: no cache may keep it. Its ETag is the record's, as a GET
    // shows it (without the secret).
    c.header("cache-control", "no-store");
    c.header("ETag", await createdIntegrationEtag(integration));
    c.header(
      "Location",
      `/v1/projects/${integration.project_id}/notification-integrations/${integration.id}`,
    );
    return c.json(integration, 201);
  });
}
