/**
 * The tools of a scope's variables (an environment's or a component's, API_CONTRACT §18): plan and
 * apply a change, list the versions, restore one. Never a value in an answer.
 */
import * as z from "zod";
import { VARIABLE_TYPES } from "../../db/schema";
import { MAX_NAME_LENGTH, VARIABLE_NAME } from "../../lib/dotenv";
import {
  MAX_CHANGE_NAMES,
  VariableChangeResultSchema,
  VariableVersionSchema,
} from "../../schemas/variable-set";
import { after, id, idempotencyKey, limit, newKey, page, READ, type Tool, tool, write } from "./define";

const scope = z
  .strictObject({
    type: z.enum(["environment", "component"]).describe("An environment's own variables, or a component's."),
    id: id("environment or component"),
  })
  .describe("Whose variables.");
const scopePath = (s: z.output<typeof scope>) =>
  `/v1/${s.type === "environment" ? "environments" : "components"}/${s.id}/variables`;
const variables = z
  .record(
    z.string().regex(VARIABLE_NAME).max(MAX_NAME_LENGTH),
    z
      .strictObject({ type: z.enum(VARIABLE_TYPES), value: z.string() })
      .nullable()
      .describe("The new type and value, or null to delete the name (merge mode only)."),
  )
  .refine((names) => {
    const count = Object.keys(names).length;
    return count >= 1 && count <= MAX_CHANGE_NAMES;
  }, `1–${MAX_CHANGE_NAMES} names.`)
  .describe(`Name → {type, value} or null. 1–${MAX_CHANGE_NAMES} names.`);
const changeArgs = {
  scope,
  variables,
  mode: z
    .enum(["merge", "replace"])
    .default("merge")
    .describe(
      "`merge`: names not given stay as they are. `replace`: the scope ends holding exactly these names.",
    ),
  base_version: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("The scope's version the change was planned against; another current version refuses it."),
};

export const VARIABLE_TOOLS: readonly Tool[] = [
  tool({
    name: "plan_variable_changes",
    title: "Plan a variable change (dry run)",
    description:
      "What a change to a scope's variables would do, name by name, changing nothing (never a value). " +
      "Pass its `base_version` to apply_variable_changes, so that a change made meanwhile refuses the apply.",
    input: z.strictObject(changeArgs),
    output: VariableChangeResultSchema.extend({
      base_version: z.number().int().describe("The scope's version this plan was made against."),
    }),
    annotations: READ,
    run: async (api, a) => {
      const result = await api.call<z.output<typeof VariableChangeResultSchema>>(
        "PATCH",
        scopePath(a.scope),
        {
          body: { variables: a.variables, mode: a.mode, base_version: a.base_version, dry_run: true },
        },
      );
      // `version` is the one the change would make, or the current one when nothing would change.
      const changes = result.changes.some((c) => c.action !== "unchanged");
      return { ...result, base_version: changes ? result.version - 1 : result.version };
    },
  }),
  tool({
    name: "apply_variable_changes",
    title: "Apply a variable change",
    description:
      "Changes a scope's variables in one step, all or nothing, as one new version. It reaches the next " +
      "deployment, not the running one. Plan it first (plan_variable_changes) and pass its `base_version`.",
    input: z.strictObject({ ...changeArgs, idempotency_key: idempotencyKey }),
    output: VariableChangeResultSchema,
    annotations: write(true),
    run: (api, a) =>
      api.call("PATCH", scopePath(a.scope), {
        body: { variables: a.variables, mode: a.mode, base_version: a.base_version },
        idempotencyKey: newKey(a.idempotency_key),
      }),
  }),
  tool({
    name: "list_variable_versions",
    title: "List a scope's variable versions",
    description:
      "The versions of a scope's variables, newest first: who changed which names, when (never a value).",
    input: z.strictObject({ scope, limit: limit(240, 20), after }),
    output: page(VariableVersionSchema),
    annotations: READ,
    run: (api, a) =>
      api.call("GET", `${scopePath(a.scope)}/versions`, { query: { limit: a.limit, after: a.after } }),
  }),
  tool({
    name: "restore_variable_version",
    title: "Restore a variable version",
    description:
      "Makes a scope's variables exactly what they were right after `version` (names, types and values), as " +
      "a new version. With `dry_run`, answers what it would change and changes nothing.",
    input: z.strictObject({
      scope,
      version: z.number().int().min(1).describe("The version to go back to."),
      dry_run: z.boolean().default(false).describe("Answer what would change; change nothing."),
      idempotency_key: idempotencyKey,
    }),
    output: VariableChangeResultSchema,
    annotations: write(true),
    run: (api, a) =>
      api.call("POST", `${scopePath(a.scope)}/versions/${a.version}/restore`, {
        body: { dry_run: a.dry_run },
        ...(a.dry_run ? {} : { idempotencyKey: newKey(a.idempotency_key) }),
      }),
  }),
];
