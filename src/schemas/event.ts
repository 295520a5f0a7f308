/**
 * The event record of the event log (API_CONTRACT §13) and the body that reports one (§9): the
 * API's schemas and the services' types (their `z.infer`), one source.
 */
import { z } from "@hono/zod-openapi";
import { EVENT_TYPES, INTERNAL_EVENT_TYPES } from "../db/event-types";
import { IdSchema, nullAsAbsent, TimestampSchema } from "../openapi/primitives";

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

export const EventCreateBody = z.strictObject({
  type: z.enum(INTERNAL_EVENT_TYPES),
  // Left out or `null`: no data beyond the `project_id` the service adds.
  data: nullAsAbsent(z.record(z.string(), z.unknown())).transform((data) => data ?? {}),
});

export type EventCreateInput = z.infer<typeof EventCreateBody>;
