/** The body that writes a variable (API_CONTRACT §3 "Variable", §17). */
import * as z from "zod";
import { echoedReadOnlyFields, wellFormed } from "../openapi/primitives";
import { VariableSchema, VariableTypeSchema } from "./variable";

/** API_CONTRACT §3: a value is at most 65,536 bytes of UTF-8 (not characters). */
export const MAX_VALUE_BYTES = 65_536;
const utf8 = new TextEncoder();

export const VariableWriteSchema = z
  .strictObject({
    name: z
      .string()
      .max(255, "At most 255 characters.")
      .regex(/^[A-Za-z_][\w]*$/, "Must match ^[A-Za-z_][\\w]*$ (a letter or _, then letters, digits or _).")
      .openapi({
        description: "Unique within its scope (component, or environment); case-sensitive.",
        example: "DATABASE_URL",
      }),
    type: VariableTypeSchema,
    value: wellFormed(z.string())
      // Characters never outnumber UTF-8 bytes: a cheap bound before the exact one.
      .max(MAX_VALUE_BYTES, { message: `At most ${MAX_VALUE_BYTES} bytes (UTF-8).`, abort: true })
      .refine((value) => utf8.encode(value).length <= MAX_VALUE_BYTES, {
        message: `At most ${MAX_VALUE_BYTES} bytes (UTF-8).`,
      })
      .openapi({ description: `The value: a string of at most ${MAX_VALUE_BYTES} bytes of UTF-8.` }),
  })
  .openapi("VariableWrite", {
    description: "The full variable: `name`, `type` and `value` are all required.",
  });

export const VariableReplaceSchema = z
  .strictObject({ ...echoedReadOnlyFields(VariableSchema, ["name", "type"]), ...VariableWriteSchema.shape })
  .openapi("VariableReplace", {
    description:
      "The full variable: `name`, `type` and `value` are all required. The record's read-only fields may be " +
      "sent back as read; they change nothing, and `id`, `environment_id` and `component_id` must match " +
      "(a replace never moves a variable).",
  });

/** A variable as a client writes it: its value in the clear, before encryption. */
export type VariableWriteInput = z.infer<typeof VariableWriteSchema>;
export type VariableReplaceInput = z.infer<typeof VariableReplaceSchema>;
