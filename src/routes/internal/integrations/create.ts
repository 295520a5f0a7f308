/** Integrations of any type, `slack` included (API_CONTRACT §9). */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { INTEGRATION_TYPES } from "../../../db/schema";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { CreatedIntegrationSchema } from "../../../schemas/integration";
import { createdIntegrationEtag, createIntegrationInternal } from "../../../services/integrations";
import { IntegrationCreateSchema } from "../../integrations/schema";
import { ProjectIdParams } from "../schema";

const InternalIntegrationCreateBody = IntegrationCreateSchema.extend({ type: z.enum(INTEGRATION_TYPES) });

export const internalCreateIntegrationRoute = defineInternalRoute({
  method: "post",
  path: "/internal/v1/projects/{project_id}/notification-integrations",
  operationId: "internalCreateIntegration",
  request: { params: ProjectIdParams, body: jsonBody(InternalIntegrationCreateBody) },
  responses: { 201: jsonContent(CreatedIntegrationSchema, "The new integration, with its signing secret.") },
});

export function registerInternalCreateIntegration(app: OpenAPIHono<AppEnv>) {
  app.openapi(internalCreateIntegrationRoute, async (c) => {
    const integration = await createIntegrationInternal(
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
