/**
 * A deployment's timeline (API_CONTRACT §19): the entry record, and the engine's body that
 * appends log lines (§9) with its answer. The API's schemas and the services' types (their
 * `z.infer`), one source.
 */
import { z } from "@hono/zod-openapi";
import { DEPLOYMENT_STATUSES, LOG_STREAMS, TIMELINE_ENTRY_TYPES } from "../db/schema";
import { InlineIdSchema, nullAsAbsent, TimestampSchema, wellFormed } from "../openapi/primitives";

/** A timeline's bounds (API_CONTRACT §19). */
export const MAX_TIMELINE_ENTRIES = 100_000;
export const MAX_LOG_LINES = 1000;
export const MAX_LOG_MESSAGE_CHARS = 8192;

// Inline, not components: a `$ref` cannot be made nullable without an `allOf` that
// validators and the generated client read badly.
const LogStreamSchema = z.enum(LOG_STREAMS);

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

/**
 * 1–8192 characters: counted as JSON Schema counts `maxLength` (code points), so an emoji is
 * one character, as a reader of the contract counts it.
 */
const LogMessageSchema = wellFormed(
  z
    .string()
    .min(1)
    .max(MAX_LOG_MESSAGE_CHARS * 2),
)
  .refine(
    (value) => value.length <= MAX_LOG_MESSAGE_CHARS || [...value].length <= MAX_LOG_MESSAGE_CHARS,
    `At most ${MAX_LOG_MESSAGE_CHARS} characters.`,
  )
  .openapi({ maxLength: MAX_LOG_MESSAGE_CHARS });

export const LogLinesBody = z.strictObject({
  lines: z
    .array(
      z.strictObject({
        message: LogMessageSchema,
        // Left out or `null`: `stdout`.
        stream: nullAsAbsent(LogStreamSchema).transform((stream) => stream ?? "stdout"),
        // Left out or `null`: a line of the deployment itself, not of one stack.
        stack_id: nullAsAbsent(InlineIdSchema),
      }),
    )
    .min(1)
    .max(MAX_LOG_LINES),
});

export type LogLinesInput = z.infer<typeof LogLinesBody>;

export const LogLinesAnswerSchema = z.object({
  first_seq: z.number().int().min(1),
  last_seq: z.number().int().min(1),
});

export type LogLinesAnswer = z.infer<typeof LogLinesAnswerSchema>;
