/** The event log (API_CONTRACT §13): a project's events, one event, an event's deliveries. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerGetEvent } from "./get";
import { registerListProjectEvents } from "./list";
import { registerListEventDeliveries } from "./list-deliveries";

export function registerEventRoutes(app: OpenAPIHono<AppEnv>) {
  registerListProjectEvents(app);
  registerGetEvent(app);
  registerListEventDeliveries(app);
}
