/**
 * The notification integration record (API_CONTRACT §3, §8): the API's schema and the services'
 * types (its `z.infer`), one source. The configuration's flags come from the one table of event
 * types (src/db/event-types.ts). Its deliveries are ./delivery.ts; the bodies that write it and
 * the operators' operations (§13) ./integration-writes.ts: a read builds neither.
 */
import * as z from "zod";
import { FLAG_DESCRIPTION, NOTIFICATION_FLAGS, type NotificationFlag } from "../db/event-types";
import { DISABLED_REASONS, INTEGRATION_TYPES } from "../db/schema";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

/** One member per notification flag, each made by `make` and described. */
export function flagShape<T extends z.ZodType>(make: () => T) {
  const shape = {} as Record<NotificationFlag, T>;
  for (const flag of NOTIFICATION_FLAGS) {
    shape[flag] = make().openapi({ description: FLAG_DESCRIPTION[flag] }) as T;
  }
  return shape;
}

export const ConfigurationSchema = z
  .object(flagShape(() => z.boolean()))
  .openapi("NotificationConfiguration", { description: "One switch per event kind." });

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

export type IntegrationRecord = z.infer<typeof IntegrationSchema>;
export type CreatedIntegration = z.infer<typeof CreatedIntegrationSchema>;
