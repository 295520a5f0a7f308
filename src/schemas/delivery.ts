/** A webhook delivery and its attempts (API_CONTRACT §8, §13): the API's schemas and the services' types. */
import * as z from "zod";
import { DELIVERY_STATUSES } from "../db/schema";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

// Published bounds of the integers sent (API_CONTRACT: every integer with a format and bounds).
const count = { format: "int32", minimum: 0, maximum: 2_147_483_647 } as const;
const statusCode = { format: "int32", minimum: 100, maximum: 599 } as const;

export const DeliveryAttemptSchema = z
  .object({
    attempt: z
      .number()
      .int()
      .openapi({ description: "1 for the first try.", ...count }),
    status_code: z
      .number()
      .int()
      .openapi(statusCode)
      .nullable()
      .openapi({ description: "The receiver's HTTP status, if any." }),
    error: z.string().nullable().openapi({ description: "Why the attempt failed, or null." }),
    duration_ms: z.number().int().openapi(count),
    next_attempt_at: TimestampSchema.nullable().openapi({
      description: "When the next try was scheduled after this one; null after a success or the last try.",
    }),
    created_at: TimestampSchema,
  })
  .openapi("DeliveryAttempt");

export const DeliverySchema = z
  .object({
    id: IdSchema,
    integration_id: IdSchema,
    event_id: IdSchema.openapi({ description: "Sent as the `webhook-id` header on every try." }),
    event_type: z.string().openapi({ example: "deployment.succeeded" }),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description:
        "`pending` (trying or waiting to retry), `succeeded`, `failed` (every try failed, or the receiver " +
        "answered 410), or `skipped` (the integration was disabled; `recover` sends it).",
    }),
    attempts: z.number().int().openapi(count),
    last_status_code: z.number().int().openapi(statusCode).nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: TimestampSchema.nullable(),
    attempt_log: z.array(DeliveryAttemptSchema).openapi({ description: "Every try, oldest first." }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi("WebhookDelivery");

export type DeliveryAttemptRecord = z.infer<typeof DeliveryAttemptSchema>;
export type DeliveryRecord = z.infer<typeof DeliverySchema>;
