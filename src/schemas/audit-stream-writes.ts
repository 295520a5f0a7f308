/** The bodies that write an audit log stream (API_CONTRACT §30): create, update, replay. */
import * as z from "zod";
import { nullAsAbsent, RecordNameSchema, recordName } from "../openapi/primitives";

// The one schema of a record's name (API_CONTRACT §33): readable, 1–100.
const name = RecordNameSchema;

const url = z
  .string()
  .min(1)
  .max(2048)
  .openapi({
    format: "uri",
    example: "https://siem.example.com/ingest/deploy-platform",
    description:
      "`https://` to a public host name, as an integration's `url` (`ALLOW_INSECURE_WEBHOOKS=true`: any http(s) URL); " +
      "never with `user:pass@`.",
  });

export const AuditStreamCreateSchema = z
  .strictObject({
    name,
    url,
    enabled: nullAsAbsent(z.boolean()).openapi({ description: "Default true." }),
    from: nullAsAbsent(z.enum(["now", "start"])).openapi({
      description: "`now` (default): from the entry of this creation. `start`: from the first entry.",
    }),
  })
  .openapi("AuditStreamCreate");

export const AuditStreamUpdateSchema = z
  .strictObject({
    // Written out inline: a nullable use of the `RecordName` component would publish the component
    // itself as nullable, for the creates too (test/properties/openapi/nullable.test.ts).
    name: nullAsAbsent(recordName()),
    url: nullAsAbsent(url),
    enabled: nullAsAbsent(z.boolean()).openapi({
      description: "`false` pauses the stream; `true` resumes it at `delivered_through + 1`.",
    }),
  })
  .openapi("AuditStreamUpdate", {
    description: "Any of `name`, `url`, `enabled`; a body with none of them is `400`.",
  });

export const AuditStreamReplaySchema = z
  .strictObject({
    from_sequence: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({
      format: "int64",
      description: "1 to `delivered_through + 1`: the stream goes back and sends again from there, in order.",
    }),
  })
  .openapi("AuditStreamReplay");

export type AuditStreamCreateInput = z.infer<typeof AuditStreamCreateSchema>;
export type AuditStreamUpdateInput = z.infer<typeof AuditStreamUpdateSchema>;
export type AuditStreamReplayInput = z.infer<typeof AuditStreamReplaySchema>;
