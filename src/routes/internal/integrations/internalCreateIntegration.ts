/** Integrations of any type, `slack` included (API_CONTRACT §9). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { CreatedIntegrationSchema } from "../../../schemas/integration";
import { InternalIntegrationCreateSchema } from "../../../schemas/integration-writes";
import {
  createdIntegrationEtag,
  internalCreateIntegration,
} from "../../../services/integrations/integrations";
import { ProjectIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/projects/{project_id}/notification-integrations",
    operationId: "internalCreateIntegration",
    request: { params: ProjectIdParams, body: jsonBody(InternalIntegrationCreateSchema) },
    responses: {
      201: jsonContent(CreatedIntegrationSchema, "The new integration, with its signing secret."),
    },
  });
  app.openapi(route, async (c) => {
    const integration = await internalCreateIntegration(
      c.get("ctx"),
      c.req.valid("param").project_id,
      c.req.valid("json"),
    );
    // It carries the signing secret: no cache may keep it. Its ETag is the record's, as a public
    // GET shows it (without the secret, a Slack URL redacted).
    c.header("cache-control", "no-store");
    c.header("ETag", await createdIntegrationEtag(integration));
    return c.json(integration, 201);
  });
}
