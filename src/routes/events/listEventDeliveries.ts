/** API_CONTRACT §13: the deliveries of one event, one per integration it reached. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listEventDeliveries } from "../../services/integrations/deliveries";
import { deliveryListSchema } from "../integrations/delivery-schema";
import { EventParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/events/{event_id}/deliveries",
    operationId: "listEventDeliveries",
    tags: ["Events"],
    summary: "List the deliveries of an event",
    description:
      "One delivery per integration the event reached (`skipped` for a disabled one), each with every attempt. " +
      "Needs the role `viewer` or above on the event's project.",
    request: { params: EventParams, query: listQuery() },
    responses: { 200: jsonContent(deliveryListSchema(), "A page of deliveries.") },
  });
  app.openapi(route, async (c) => {
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listEventDeliveries(callerContext(c), c.req.valid("param").event_id, page), 200);
  });
}
