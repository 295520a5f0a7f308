/**
 * The notification integration and webhook delivery records (API_CONTRACT §3, §8): the API's
 * schemas and the services' types, one source. The configuration's flags come from the one
 * table of event types (event-types.ts).
 */
import { z } from "@hono/zod-openapi";
import { FLAG_DESCRIPTION, NOTIFICATION_FLAGS, type NotificationFlag } from "../db/event-types";
import { DELIVERY_STATUSES, DISABLED_REASONS, INTEGRATION_TYPES } from "../db/schema";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

function flagShape<T extends z.ZodType>(make: () => T) {
  const shape = {} as Record<NotificationFlag, T>;
  for (const flag of NOTIFICATION_FLAGS) {
    shape[flag] = make().openapi({ description: FLAG_DESCRIPTION[flag] }) as T;
  }
  return shape;
}

export const ConfigurationSchema = z
  .object(flagShape(() => z.boolean()))
  .openapi("NotificationConfiguration", { description: "One switch per event kind." });

export const ConfigurationInputSchema = z
  .strictObject(flagShape(() => z.boolean().nullable().optional()))
  .openapi("NotificationConfigurationInput", {
    description: "Any subset of the flags; a flag given `null` is not given.",
  });

export const IntegrationSchema = z
  .object({
    id: IdSchema,
    project_id: IdSchema,
    type: z.enum(INTEGRATION_TYPES),
    url: z.string().openapi({
      description:
        "Where deliveries go. A `slack` integration's URL is a credential: it reads as the origin, `/…` and " +
        "the last 4 characters of the path (`https://hooks.slack.com/…x7Qz`).",
    }),
    configuration: ConfigurationSchema,
    enabled: z.boolean().openapi({
      description:
        "False while disabled: events are then recorded as `skipped` deliveries and not sent (`recover` sends them later).",
    }),
    disabled_reason: z
      .enum(DISABLED_REASONS)
      .nullable()
      .openapi({
        description:
          "`manual` (PATCH `enabled: false`), `gone` (the receiver answered 410), `failing` (nothing but failed " +
          "attempts for 5 days, at least 3 failed deliveries); null while enabled.",
      }),
    disabled_at: TimestampSchema.nullable(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi("NotificationIntegration");

export const CreatedIntegrationSchema = IntegrationSchema.extend({
  signing_secret: z.string().openapi({
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    description:
      "`whsec_` + base64 of 32 random bytes. Shown only in this response: store it to verify the " +
      "`webhook-signature` header of deliveries (Standard Webhooks).",
  }),
}).openapi("CreatedNotificationIntegration");

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

export type IntegrationRecord = z.infer<typeof IntegrationSchema>;
export type CreatedIntegration = z.infer<typeof CreatedIntegrationSchema>;
export type DeliveryAttemptRecord = z.infer<typeof DeliveryAttemptSchema>;
export type DeliveryRecord = z.infer<typeof DeliverySchema>;
