/** The event log (API_CONTRACT §13): a project's events, one event, an event's deliveries. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { idParams, queryList } from "../../openapi/primitives";
import { EventSchema, EventTypeSchema } from "../../schemas/event";
import { listEventDeliveries } from "../../services/delivery-records";
import { getEvent, listEvents, typeFilterKey } from "../../services/event-log";
import { DeliveryListSchema } from "../integrations/schema";

const TAGS = ["Events"];

const TypeFilterSchema = queryList(
  EventTypeSchema,
  "Only events of these types: repeat the parameter (`type=deployment.failed&type=service.in_alarm`) or separate " +
    "values with commas; a value given twice counts once. A cursor is bound to the set of types.",
);

const EventListQuerySchema = ListQuerySchema.extend({ type: TypeFilterSchema });

export const listEventsRoute = defineRoute({
  method: "get",
  path: "/v1/projects/{project_id}/events",
  operationId: "listProjectEvents",
  tags: TAGS,
  summary: "List the events of a project",
  description:
    "Every event of the last 30 days (older ones are deleted daily), newest first by default, to reconcile from " +
    "when a receiver missed deliveries. Needs the project role `viewer` or above.",
  request: { params: idParams("project_id"), query: EventListQuerySchema },
  responses: { 200: jsonContent(envelope(EventSchema, "EventList"), "A page of events.") },
});

import { envelope, ListQuerySchema } from "../../openapi/lists";

export const getEventRoute = defineRoute({
  method: "get",
  path: "/v1/events/{event_id}",
  operationId: "getEvent",
  tags: TAGS,
  summary: "Read an event",
  description: "Needs the role `viewer` or above on the event's project.",
  request: { params: idParams("event_id") },
  responses: { 200: jsonContent(EventSchema, "The event.") },
});

export const listEventDeliveriesRoute = defineRoute({
  method: "get",
  path: "/v1/events/{event_id}/deliveries",
  operationId: "listEventDeliveries",
  tags: TAGS,
  summary: "List the deliveries of an event",
  description:
    "One delivery per integration the event reached (`skipped` for a disabled one), each with every attempt. " +
    "Needs the role `viewer` or above on the event's project.",
  request: { params: idParams("event_id"), query: ListQuerySchema },
  responses: { 200: jsonContent(DeliveryListSchema, "A page of deliveries.") },
});

export function registerEventRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listEventsRoute, async (c) => {
    const query = c.req.valid("query");
    const page = pageRequest(query, typeFilterKey(query.type));
    return c.json(await listEvents(callerContext(c), c.req.valid("param").project_id, query.type, page), 200);
  });
  app.openapi(getEventRoute, async (c) => {
    return c.json(await getEvent(callerContext(c), c.req.valid("param").event_id), 200);
  });
  app.openapi(listEventDeliveriesRoute, async (c) => {
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listEventDeliveries(callerContext(c), c.req.valid("param").event_id, page), 200);
  });
}
