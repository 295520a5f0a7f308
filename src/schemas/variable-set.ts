/**
 * Variable sets (API_CONTRACT §18): a change's result and a scope's version record. The API's
 * schemas and the services' types (their `z.infer`), one source. The change and restore requests
 * are ./variable-set-writes.ts: a read of versions builds neither.
 */
import * as z from "zod";
import { IdSchema, NullableIdSchema, TimestampSchema } from "../openapi/primitives";
import { VariableTypeSchema } from "./variable";

/** API_CONTRACT §18: one change holds between 1 and 500 names. */
export const MAX_CHANGE_NAMES = 500;
/** The largest version number a request may name (JavaScript's safe integers). */
export const MAX_VERSION = Number.MAX_SAFE_INTEGER;

const TypeChangeSchema = z.object({
  from: VariableTypeSchema.nullable(),
  to: VariableTypeSchema.nullable(),
});

const ChangeItem = {
  name: z.string().openapi({ example: "DATABASE_URL" }),
  type: TypeChangeSchema.openapi({ description: "The type before and after (null: absent)." }),
  value_changed: z
    .boolean()
    .openapi({ description: "Whether the value differs (true for a create or a delete)." }),
};

export const VariableChangeSchema = z
  .object({
    name: ChangeItem.name,
    action: z.enum(["created", "updated", "deleted", "unchanged"]),
    type: ChangeItem.type,
    value_changed: ChangeItem.value_changed,
  })
  .openapi("VariableChange");

export const VariableChangeResultSchema = z
  .object({
    version: z.number().int().openapi({
      description:
        "The version made (or that a dry run would make), or the current one when nothing changes.",
      example: 4,
    }),
    dry_run: z.boolean(),
    changes: z
      .array(VariableChangeSchema)
      .openapi({ description: "Every name given (or removed), by name." }),
  })
  .openapi("VariableChangeResult", {
    description: "What a change did (or, in a dry run, would do) to the scope, name by name. Never a value.",
  });

export const VariableVersionSchema = z
  .object({
    version: z.number().int().openapi({ example: 3 }),
    scope: z.object({ type: z.enum(["environment", "component"]), id: IdSchema }),
    created_at: TimestampSchema,
    actor: z.object({
      type: z.enum(["api_key", "admin"]),
      account_id: NullableIdSchema,
      api_key_id: NullableIdSchema,
    }),
    request_id: z.string(),
    changes: z
      .array(
        z.object({
          name: ChangeItem.name,
          action: z.enum(["created", "updated", "deleted"]),
          type: ChangeItem.type,
          value_changed: ChangeItem.value_changed,
        }),
      )
      .openapi({ description: "The names the version created, updated or deleted, by name. Never a value." }),
  })
  .openapi("VariableVersion", { description: "One version of a scope's variables: who changed what, when." });

export type VariableChangeResult = z.infer<typeof VariableChangeResultSchema>;
export type VariableChange = z.infer<typeof VariableChangeSchema>;
export type VariableVersionRecord = z.infer<typeof VariableVersionSchema>;
