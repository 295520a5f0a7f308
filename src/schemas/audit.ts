/** The audit entry record (API_CONTRACT §14): the API's schema and the services' type, one source. */
import * as z from "zod";
import { IdSchema, NullableIdSchema, TimestampSchema } from "../openapi/primitives";

/** API_CONTRACT §14: one audit entry. */
export const AuditEntrySchema = z
  .object({
    id: IdSchema,
    sequence: z
      .number()
      .int()
      .min(1)
      .openapi({
        description:
          "Its place in the organization's log (§30): 1 for the first entry, one more for each next, in commit " +
          "order, with no gap and no repeat.",
      }),
    org_id: NullableIdSchema,
    project_id: NullableIdSchema,
    action: z.string().openapi({
      description:
        "The operation's `operationId` (`createProject`, `revealVariable`; internal ones `internal.<name>`).",
      example: "createProject",
    }),
    target: z.object({ type: z.string(), id: z.string() }).openapi({
      description:
        "What the operation acted on (`project`, `variable`, `project_member`, `api_key`, …) and its ID.",
    }),
    actor: z.object({
      type: z.enum(["api_key", "admin"]).openapi({ description: "`admin`: the internal API." }),
      account_id: NullableIdSchema,
      api_key_id: NullableIdSchema,
    }),
    request_id: z.string().openapi({ description: "The request's `x-request-id`." }),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    changes: z
      .record(z.string(), z.object({ from: z.unknown(), to: z.unknown() }))
      .nullable()
      .openapi({
        description:
          "`{field: {from, to}}` over the record's non-secret top-level fields (null before a create, after a " +
          "delete), or null. Never a variable value, a signing secret or an API key. A string longer than " +
          "32,768 characters is kept as its first 32,768 and `…[+N characters]` (N left out), so that an entry " +
          "fits its row.",
      }),
    created_at: TimestampSchema,
  })
  .openapi("AuditEntry");

export type AuditEntryRecord = z.infer<typeof AuditEntrySchema>;
