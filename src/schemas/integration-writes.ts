/**
 * What writes a notification integration (API_CONTRACT §8, §9): create and update, and the
 * operators' operations (§13: test, recover, rotate the secret), with what they answer.
 */
import * as z from "zod";
import { INTEGRATION_TYPES } from "../db/schema";
import { instant, nullAsAbsent, TimestampSchema } from "../openapi/primitives";
import { EventTypeSchema } from "./event";
import { flagShape } from "./integration";

export const ConfigurationInputSchema = z
  .strictObject(flagShape(() => z.boolean().nullable().optional()))
  .openapi("NotificationConfigurationInput", {
    description: "Any subset of the flags; a flag given `null` is not given.",
  });

const url = z
  .string()
  .min(1)
  .max(2048)
  .openapi({
    format: "uri",
    example: "https://hooks.example.com/deploys",
    description:
      "Where deliveries are POSTed: `https://` to a public host name. `http://`, `localhost`, loopback, " +
      "private, link-local and IP-literal hosts are `400 bad_input`, unless `ALLOW_INSECURE_WEBHOOKS=true` " +
      "(local development: `npm run dev`); never with `user:pass@`.",
  });

export const IntegrationCreateSchema = z
  .strictObject({
    type: z.literal("webhook").openapi({ description: "Only `webhook` can be created through this API." }),
    url,
    // A union, not `nullAsAbsent`: the input keeps its `$ref` in the document; null is read as {}.
    configuration: z
      .union([ConfigurationInputSchema, z.null()])
      .optional()
      .openapi({ description: "Flags left out (or the whole object, or `null`) are `false`." }),
  })
  .openapi("NotificationIntegrationCreate");

export const IntegrationUpdateSchema = z
  .strictObject({
    configuration: z.union([ConfigurationInputSchema, z.null()]).optional().openapi({
      description:
        "The given flags are merged into the stored configuration; the others keep their value (`null`: none given).",
    }),
    url: nullAsAbsent(url).openapi({
      description:
        "A new destination (`null`: unchanged); refused (`400 bad_input`) on a `slack` integration, whose URL is a credential.",
    }),
    enabled: nullAsAbsent(z.boolean()).openapi({
      description:
        "`false` disables (reason `manual`); on an integration already disabled, its `disabled_reason` and " +
        "`disabled_at` stay (a `gone` or `failing` one keeps what the service found, and when). `true` " +
        "re-enables and clears both. Neither sends anything to the integration.",
    }),
  })
  .openapi("NotificationIntegrationUpdate", {
    description: "At least one flag, `url` or `enabled`; a body with none is `400 bad_input`.",
  });

/** The internal API's create: any type, `slack` included (API_CONTRACT §9). */
export const InternalIntegrationCreateSchema = IntegrationCreateSchema.extend({
  type: z.enum(INTEGRATION_TYPES),
});

export const TestSendBodySchema = z
  .strictObject({
    type: nullAsAbsent(EventTypeSchema).openapi({
      description: "The event type to send; default (absent or `null`) `deployment.succeeded`.",
    }),
  })
  .openapi("WebhookTestRequest");

export const TestSendResultSchema = z
  .object({
    delivered: z.boolean().openapi({ description: "True when the receiver answered 2xx." }),
    status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's HTTP status, if it answered." }),
    error: z
      .string()
      .nullable()
      .openapi({ description: "Why it was not delivered (HTTP status, timeout, network)." }),
    duration_ms: z.number().int(),
  })
  .openapi("WebhookTestResult");

const Instant = instant();

export const RecoverBodySchema = z
  .strictObject({
    since: Instant.openapi({ description: "Events created at or after this instant." }),
    until: nullAsAbsent(Instant).openapi({
      // Instant's own metadata says `string`: the null this field also takes is spelled out.
      type: ["string", "null"],
      description: "Events created at or before this instant; default (absent or `null`) now.",
    }),
  })
  .refine((b) => b.until === undefined || b.since <= b.until, {
    path: ["until"],
    message: "Must not be before `since`.",
  })
  .openapi("WebhookRecoverRequest");

export const RecoverResultSchema = z
  .object({
    queued: z.number().int().openapi({
      description: "Deliveries re-queued: every failed or skipped one of the range.",
    }),
  })
  .openapi("WebhookRecoverResult");

export const RotateSecretBodySchema = z
  .strictObject({
    expire_previous_in: nullAsAbsent(z.number().min(0).max(604_800)).openapi({
      description:
        "Seconds the previous secret keeps signing (0–604800, default 86400 when absent or `null`; fractions count to the millisecond).",
    }),
  })
  .openapi("RotateSigningSecretRequest");

export const RotatedSecretSchema = z
  .object({
    signing_secret: z.string().openapi({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
    previous_expires_at: TimestampSchema.openapi({
      description: "Until then every delivery carries two signatures: `v1,<new> v1,<previous>`.",
    }),
  })
  .openapi("RotatedSigningSecret");

export type IntegrationCreateInput = z.infer<typeof IntegrationCreateSchema>;
export type InternalIntegrationCreateInput = z.infer<typeof InternalIntegrationCreateSchema>;
export type IntegrationUpdateInput = z.infer<typeof IntegrationUpdateSchema>;
export type ConfigurationInput = z.infer<typeof ConfigurationInputSchema>;
export type TestSendInput = z.infer<typeof TestSendBodySchema>;
export type TestSendResult = z.infer<typeof TestSendResultSchema>;
export type RecoverInput = z.infer<typeof RecoverBodySchema>;
export type RecoverResult = z.infer<typeof RecoverResultSchema>;
export type RotateSecretInput = z.infer<typeof RotateSecretBodySchema>;
export type RotatedSecret = z.infer<typeof RotatedSecretSchema>;
