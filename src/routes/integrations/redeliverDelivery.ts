/** API_CONTRACT §13: a new series of attempts for one delivery. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { redeliverDelivery } from "../../services/integrations/redelivery";
import { DeliveryParams, DeliverySchema } from "./delivery-schema";
import { INTEGRATION_PATH } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: `${INTEGRATION_PATH}/deliveries/{delivery_id}/redeliver`,
    operationId: "redeliverDelivery",
    lostAnswer: { rebuild: "none", why: "a delivery has no read of its own" },
    tags: ["Notification integrations"],
    summary: "Redeliver one delivery",
    description:
      "Starts a new series of attempts (the usual retry schedule) for the same event, with the same `webhook-id`, " +
      "whatever the delivery's status, through the queue; it is sent even while the integration is disabled. " +
      "Answers the delivery, now `pending`. Needs the project role `contributor` or above.",
    request: { params: DeliveryParams },
    responses: { 202: jsonContent(DeliverySchema, "The delivery, queued again.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, integration_id, delivery_id } = c.req.valid("param");
    return c.json(await redeliverDelivery(callerContext(c), project_id, integration_id, delivery_id), 202);
  });
}
