/** The webhook operations of API_CONTRACT §13: test send, redeliver, recover, rotate secret. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { NO_STORE_HEADER } from "../../openapi/components";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { recover, redeliver, rotateSecret, testSend } from "../../services/webhook-ops";
import {
  RecoverBodySchema,
  RecoverResultSchema,
  RotatedSecretSchema,
  RotateSecretBodySchema,
  TestSendBodySchema,
  TestSendResultSchema,
} from "./ops-schema";
import { DeliveryParams, DeliverySchema, IntegrationParams } from "./schema";

const ONE = "/v1/projects/{project_id}/notification-integrations/{integration_id}";
const TAGS = ["Notification integrations"];
const optionalBody = <T extends Parameters<typeof jsonBody>[0]>(schema: T) => ({
  ...jsonBody(schema),
  required: false,
});

export const testIntegrationRoute = defineRoute({
  method: "post",
  path: `${ONE}/test`,
  operationId: "testIntegration",
  tags: TAGS,
  summary: "Send a test delivery now",
  description:
    "Sends one signed delivery of the given event type (default `deployment.succeeded`) at once and answers what " +
    "the receiver did. The payload's `data` is `{test: true, project_id}`; the `webhook-id` is fresh. 15 s timeout, " +
    "redirects not followed, not retried, not recorded as an event or a delivery, and it never disables the " +
    "integration (a disabled one can be tested). Needs the project role `contributor` or above.",
  request: { params: IntegrationParams, body: optionalBody(TestSendBodySchema) },
  responses: { 200: jsonContent(TestSendResultSchema, "What the receiver did.") },
});

export const redeliverRoute = defineRoute({
  method: "post",
  path: `${ONE}/deliveries/{delivery_id}/redeliver`,
  operationId: "redeliverDelivery",
  tags: TAGS,
  summary: "Redeliver one delivery",
  description:
    "Starts a new series of attempts (the usual retry schedule) for the same event, with the same `webhook-id`, " +
    "whatever the delivery's status, through the queue; it is sent even while the integration is disabled. " +
    "Answers the delivery, now `pending`. Needs the project role `contributor` or above.",
  request: { params: DeliveryParams },
  responses: { 202: jsonContent(DeliverySchema, "The delivery, queued again.") },
});

export const recoverRoute = defineRoute({
  method: "post",
  path: `${ONE}/recover`,
  operationId: "recoverIntegration",
  tags: TAGS,
  summary: "Re-send failed and skipped deliveries of a time range",
  description:
    "Re-queues every `failed` or `skipped` delivery of this integration whose event was created between `since` " +
    "and `until` (both included; `until` defaults to now), all of them in one call, oldest deliveries first. " +
    "Each is sent through the queue with its " +
    "event's original `webhook-id` (even while the integration is disabled). Needs `contributor` or above.",
  request: { params: IntegrationParams, body: jsonBody(RecoverBodySchema) },
  responses: { 202: jsonContent(RecoverResultSchema, "How many deliveries were queued.") },
});

export const rotateSecretRoute = defineRoute({
  method: "post",
  path: `${ONE}/rotate-secret`,
  operationId: "rotateIntegrationSecret",
  tags: TAGS,
  summary: "Rotate the signing secret",
  description:
    "Makes a new signing secret, shown only in this response (`Cache-Control: no-store`). The previous one keeps " +
    "signing for `expire_previous_in` seconds (default 86400): meanwhile every delivery carries two signatures, " +
    "`v1,<new> v1,<previous>`, so receivers switch keys without losing a message. Then it is deleted. A secret " +
    "rotated out earlier stops signing at once. Needs the project role `contributor` or above.",
  request: { params: IntegrationParams, body: optionalBody(RotateSecretBodySchema) },
  responses: { 200: { ...jsonContent(RotatedSecretSchema, "The new secret."), headers: NO_STORE_HEADER } },
});

export function registerIntegrationOperations(app: OpenAPIHono<AppEnv>) {
  app.openapi(testIntegrationRoute, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    const { type } = c.req.valid("json");
    const result = await testSend(
      callerContext(c),
      project_id,
      integration_id,
      type ?? "deployment.succeeded",
    );
    return c.json(result, 200);
  });
  app.openapi(redeliverRoute, async (c) => {
    const { project_id, integration_id, delivery_id } = c.req.valid("param");
    return c.json(await redeliver(callerContext(c), project_id, integration_id, delivery_id), 202);
  });
  app.openapi(recoverRoute, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    return c.json(await recover(callerContext(c), project_id, integration_id, c.req.valid("json")), 202);
  });
  app.openapi(rotateSecretRoute, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    const { expire_previous_in } = c.req.valid("json");
    const rotated = await rotateSecret(callerContext(c), project_id, integration_id, expire_previous_in);
    // It carries the signing secret: no cache may keep it.
    c.header("cache-control", "no-store");
    return c.json(rotated, 200);
  });
}
