import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { EventSchema } from "../../schemas/event";
import { getEvent } from "../../services/events/log";
import { EventParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/events/{event_id}",
    operationId: "getEvent",
    tags: ["Events"],
    summary: "Read an event",
    description: "Needs the role `viewer` or above on the event's project.",
    request: { params: EventParams },
    responses: { 200: jsonContent(EventSchema, "The event.") },
  });
  app.openapi(route, async (c) => {
    return c.json(await getEvent(callerContext(c), c.req.valid("param").event_id), 200);
  });
}
