/** API_CONTRACT §13: a new signing secret, the previous one signing on for an overlap. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { NO_STORE_HEADER } from "../../openapi/components";
import { defineRoute, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { RotatedSecretSchema, RotateSecretBodySchema } from "../../schemas/integration-writes";
import { rotateIntegrationSecret } from "../../services/integrations/operator";
import { INTEGRATION_PATH, IntegrationParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: `${INTEGRATION_PATH}/rotate-secret`,
    operationId: "rotateIntegrationSecret",
    lostAnswer: { rebuild: "none", why: "the new signing secret is shown once" },
    tags: ["Notification integrations"],
    summary: "Rotate the signing secret",
    description:
      "Makes a new signing secret, shown only in this response (`Cache-Control: no-store`). The previous one keeps " +
      "signing for `expire_previous_in` seconds (default 86400): meanwhile every delivery carries two signatures, " +
      "`v1,<new> v1,<previous>`, so receivers switch keys without losing a message. Then it is deleted. A secret " +
      "rotated out earlier stops signing at once. Needs the project role `contributor` or above.",
    request: { params: IntegrationParams, body: optionalJsonBody(RotateSecretBodySchema) },
    responses: { 200: { ...jsonContent(RotatedSecretSchema, "The new secret."), headers: NO_STORE_HEADER } },
  });
  app.openapi(route, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    const rotated = await rotateIntegrationSecret(
      callerContext(c),
      project_id,
      integration_id,
      c.req.valid("json"),
    );
    // It carries the signing secret: no cache may keep it.
    c.header("cache-control", "no-store");
    return c.json(rotated, 200);
  });
}
