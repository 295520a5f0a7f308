/** Bodies and answers of the webhook operations (API_CONTRACT §13): test, recover, rotate-secret. */
import { z } from "@hono/zod-openapi";
import { instant, nullAsAbsent, TimestampSchema } from "../../openapi/primitives";
import { EventTypeSchema } from "../../schemas/event";

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
