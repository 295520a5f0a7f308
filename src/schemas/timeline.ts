/**
 * A deployment's timeline (API_CONTRACT §19): the entry record and its bounds. The API's schema
 * and the services' types (their `z.infer`), one source. The engine's body that appends log lines
 * (§9), with its answer, is ./timeline-writes.ts.
 */
import * as z from "zod";
import { DEPLOYMENT_STATUSES, LOG_STREAMS, TIMELINE_ENTRY_TYPES } from "../db/schema";
import { InlineIdSchema, TimestampSchema } from "../openapi/primitives";

/** A timeline's bounds (API_CONTRACT §19). */
export const MAX_TIMELINE_ENTRIES = 100_000;
export const MAX_LOG_LINES = 1000;
export const MAX_LOG_MESSAGE_CHARS = 8192;

// Inline, not components: a `$ref` cannot be made nullable without an `allOf` that
// validators and the generated client read badly.
export const LogStreamSchema = z.enum(LOG_STREAMS);

export const TimelineEntrySchema = z
  .object({
    seq: z.number().int().min(1).openapi({ description: "1, 2, 3… in the order recorded." }),
    type: z.enum(TIMELINE_ENTRY_TYPES),
    created_at: TimestampSchema,
    stack_id: InlineIdSchema.nullable(),
    status: z.enum(DEPLOYMENT_STATUSES).nullable().openapi({
      description: "The status entered.",
    }),
    status_reason: z.string().nullable().openapi({ description: "The stack's reason, if any." }),
    stream: LogStreamSchema.nullable().openapi({
      description: "A log line's stream.",
    }),
    message: z.string().nullable().openapi({ description: "A log line's text.", example: "Pulling web:2" }),
  })
  .openapi("DeploymentTimelineEntry");

export type TimelineEntry = z.infer<typeof TimelineEntrySchema>;
