/**
 * The event record of the event log (API_CONTRACT §13): the API's schema and the services' type
 * (its `z.infer`), one source. The body that reports one (§9) is ./event-writes.ts.
 */
import * as z from "zod";
import { EVENT_TYPES } from "../db/event-types";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

export const EventTypeSchema = z.enum(EVENT_TYPES).openapi("EventType", { example: "deployment.succeeded" });

export const EventSchema = z
  .object({
    id: IdSchema.openapi({ description: "Sent as the `webhook-id` header of every delivery of this event." }),
    type: EventTypeSchema,
    project_id: IdSchema,
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "Exactly the `data` of the webhook body: `project_id` always, and `deployment` (the deployment record) for deployment events.",
    }),
    created_at: TimestampSchema,
  })
  .openapi("Event");

export type EventRecord = z.infer<typeof EventSchema>;
