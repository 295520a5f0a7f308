import { z } from "@hono/zod-openapi";
import { DELIVERY_STATUSES, INTEGRATION_TYPES } from "../../db/schema";
import { envelope, IdSchema, idParams, TimestampSchema } from "../../http/openapi";
import { CONFIGURATION_FLAGS } from "../../services/integrations";

const FLAG_DESCRIPTIONS: Record<(typeof CONFIGURATION_FLAGS)[number], string> = {
  deployments_failed: "`deployment.failed`: a deployment failed.",
  deployments_in_progress: "`deployment.in_progress`: a deployment started.",
  deployments_succeeded: "`deployment.succeeded`: a deployment succeeded.",
  changelog: "`changelog.created`: a changelog entry was published.",
  promotions: "`promotion.created`: a promotion happened.",
  services_in_alarm: "`service.in_alarm`: a service went into alarm.",
  services_ok: "`service.ok`: a service is OK again.",
};

function flagShape<T extends z.ZodType>(make: () => T) {
  const shape = {} as Record<(typeof CONFIGURATION_FLAGS)[number], T>;
  for (const flag of CONFIGURATION_FLAGS) {
    shape[flag] = make().openapi({ description: FLAG_DESCRIPTIONS[flag] }) as T;
  }
  return shape;
}

export const ConfigurationSchema = z
  .object(flagShape(() => z.boolean()))
  .openapi("NotificationConfiguration", { description: "One switch per event kind." });

export const ConfigurationInputSchema = z
  .strictObject(flagShape(() => z.boolean().optional()))
  .openapi("NotificationConfigurationInput", { description: "Any subset of the flags." });

const url = z
  .string()
  .min(1)
  .max(2048)
  .openapi({
    format: "uri",
    example: "https://hooks.example.com/deploys",
    description:
      "Where deliveries are POSTed: `https://` to a public host name. `http://`, `localhost`, loopback, " +
      "private, link-local and IP-literal hosts, and URLs with credentials, are `400 bad_input`.",
  });

export const IntegrationSchema = z
  .object({
    id: IdSchema,
    project_id: IdSchema,
    type: z.enum(INTEGRATION_TYPES),
    url: z.string(),
    configuration: ConfigurationSchema,
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

export const IntegrationListSchema = envelope(IntegrationSchema, "NotificationIntegrationList");

export const IntegrationCreateSchema = z
  .strictObject({
    type: z.literal("webhook").openapi({ description: "Only `webhook` can be created through this API." }),
    url,
    configuration: ConfigurationInputSchema.optional().openapi({
      description: "Flags left out (or the whole object) are `false`.",
    }),
  })
  .openapi("NotificationIntegrationCreate");

export const IntegrationUpdateSchema = z
  .strictObject({
    configuration: ConfigurationInputSchema.optional().openapi({
      description: "The given flags are merged into the stored configuration; the others keep their value.",
    }),
    url: url.optional(),
  })
  .openapi("NotificationIntegrationUpdate", {
    description: "At least one flag or `url`; nothing to change is `400 bad_input`.",
  });

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
      description: "`pending` (trying or waiting to retry), `succeeded`, or `failed` (every try failed).",
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

export const DeliveryListSchema = envelope(DeliverySchema, "WebhookDeliveryList");

export const ProjectParams = idParams("project_id");
export const IntegrationParams = idParams("project_id", "integration_id");
