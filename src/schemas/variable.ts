/**
 * The variable record (API_CONTRACT §3 "Variable"): the API's schema and the services' type (its
 * `z.infer`), one source, and a revealed value. The body that writes one is ./variable-writes.ts:
 * a read builds none.
 */
import * as z from "zod";
import { VARIABLE_TYPES } from "../db/schema";
import { IdSchema, InlineIdSchema, TimestampSchema } from "../openapi/primitives";

export const VariableTypeSchema = z.enum(VARIABLE_TYPES).openapi({
  description:
    "Storage method. `secret` and `secure_string` values are encrypted at rest (AES-256-GCM); " +
    "`string` values are stored as plaintext.",
});

export const VariableSchema = z
  .object({
    id: IdSchema,
    name: z.string().openapi({ example: "DATABASE_URL" }),
    type: VariableTypeSchema,
    environment_id: IdSchema.openapi({
      description: "The environment; for a component variable, its component's.",
    }),
    component_id: InlineIdSchema.nullable().openapi({
      description: "The component, or null for an environment variable.",
    }),
    resource_id: z
      .string()
      .max(1024)
      .regex(/^\/[\w-]+\/[\w-]+\/[\w-]+\/[A-Za-z_]\w*$/)
      .openapi({
        description: 'Where the value lives: `/{project_id}/{environment_id}/{component_id or "_"}/{name}`.',
        example: "/7Hq3VnT5m2WcXbQ9pLk4Rz/3kT9sQ2mN8vB4xC7zP1wHd/_/DATABASE_URL",
      }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi("Variable", {
    description: "A variable. Its value is never part of the record: read it from `/value`.",
  });

export type VariableRecord = z.infer<typeof VariableSchema>;

/** A revealed value (`GET /v1/variables/{id}/value`): an answer, not a body. */
export const VariableValueSchema = z
  .object({ value: z.string().openapi({ description: "The decrypted current value." }) })
  .openapi("VariableValue");
export type VariableValue = z.infer<typeof VariableValueSchema>;
