/** The engine's log lines (API_CONTRACT §19) and what their append answers. */
import * as z from "zod";
import { InlineIdSchema, nullAsAbsent, wellFormed } from "../openapi/primitives";
import { LogStreamSchema, MAX_LOG_LINES, MAX_LOG_MESSAGE_CHARS } from "./timeline";

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
