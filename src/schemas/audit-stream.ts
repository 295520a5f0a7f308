/**
 * An audit log stream (API_CONTRACT §30): the record, and the create's answer that adds the signing
 * secret once. The bodies that write it are ./audit-stream-writes.ts: a read builds none.
 */
import * as z from "zod";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

export const AuditStreamSchema = z
  .object({
    id: IdSchema,
    org_id: IdSchema,
    name: z.string(),
    url: z.string().openapi({ description: "Where batches are POSTed." }),
    enabled: z
      .boolean()
      .openapi({ description: "False: paused, nothing is sent (a `410 Gone` answer pauses it)." }),
    delivered_through: z.number().int().min(0).openapi({
      description: "The greatest sequence the receiver acknowledged, every smaller one with it.",
    }),
    pending: z.number().int().min(0).openapi({
      description: "The organization's last sequence minus `delivered_through`.",
    }),
    last_error: z
      .object({
        at: TimestampSchema,
        status_code: z.number().int().nullable(),
        message: z.string(),
      })
      .nullable()
      .openapi({ description: "The last failed attempt, cleared by the next success." }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi("AuditStream");

export const CreatedAuditStreamSchema = AuditStreamSchema.extend({
  signing_secret: z.string().openapi({
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    description:
      "`whsec_` + base64 of 32 random bytes; shown only here. Batches are signed with it (Standard Webhooks).",
  }),
}).openapi("CreatedAuditStream");

export type AuditStreamRecord = z.infer<typeof AuditStreamSchema>;
export type CreatedAuditStreamRecord = z.infer<typeof CreatedAuditStreamSchema>;
