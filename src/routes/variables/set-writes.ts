/**
 * What the four writing operations of variable sets (API_CONTRACT §18) share: a change and a
 * restore, under an environment and under a component (./sets.ts has what every one of the ten
 * shares, and the reads'); apart, so that a read of versions or an export builds no request body.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { jsonBody, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { VariableChangeResultSchema } from "../../schemas/variable-set";
import {
  VariableChangesSchema,
  VariableRestoreSchema,
  VariableSetEntrySchema,
} from "../../schemas/variable-set-writes";
import { SCOPE_NOTE } from "./sets";

/**
 * Registers what a change request's document refers to: the entry schema its `variables` map to
 * (validated by hand, see VariableChangesSchema) and the pasteable examples (`components.examples`).
 */
export function registerChangeExamples(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.register("VariableSetEntry", VariableSetEntrySchema);
  const examples: Record<string, { summary: string; value: unknown }> = {
    VariableChangesDotenvDryRun: {
      summary: "Preview a .env import (dry run)",
      value: {
        dotenv: 'DATABASE_URL="postgres://app@db.internal:5432/app"\nLOG_LEVEL=info # quieter\n',
        type: "secret",
        dry_run: true,
      },
    },
    VariableChangesMerge: {
      summary: "Set two variables and delete one, if still at version 3",
      value: {
        variables: {
          API_URL: { type: "string", value: "https://api.example.com" },
          STRIPE_KEY: { type: "secret", value: "sk_live_51H…" },
          OLD_FLAG: null,
        },
        base_version: 3,
      },
    },
    VariableChangesReplace: {
      summary: "Make the scope hold exactly these names",
      value: { mode: "replace", variables: { LOG_LEVEL: { type: "string", value: "warn" } } },
    },
  };
  for (const [name, example] of Object.entries(examples)) {
    app.openAPIRegistry.registerComponent("examples", name, example);
  }
}

const CHANGE_BODY = {
  ...jsonBody(VariableChangesSchema),
  content: {
    "application/json": {
      schema: VariableChangesSchema,
      examples: Object.fromEntries(
        ["VariableChangesDotenvDryRun", "VariableChangesMerge", "VariableChangesReplace"].map((name) => [
          name,
          { $ref: `#/components/examples/${name}` },
        ]),
      ),
    },
  },
};

export const applyChanges = {
  method: "patch" as const,
  tags: ["Variables"],
  summary: "Change many variables of a scope at once",
  description:
    `${SCOPE_NOTE} One atomic change of 1–500 names, from \`variables\` (name → \`{type, value}\` or \`null\` ` +
    "to delete) or from a `dotenv` file (each entry takes `type`, default `secret`), in `merge` mode (default; " +
    "names not given stay) or `replace` mode (the scope ends holding exactly the given names). It makes one " +
    "new version of the scope, or none when nothing changes. `dry_run: true` answers the exact result and " +
    "changes nothing. `base_version`: `409 conflict` (cause `base_version`) unless the scope is at that " +
    "version. Refusals are `400 bad_input` with a `cause` path such as `variables.NAME.value` or " +
    "`dotenv.line.7`, and change nothing. An `If-Match` other than `*` never matches (a scope has no strong " +
    "ETag): send `base_version`. Needs the project role `contributor` or above.",
  request: { body: CHANGE_BODY },
  responses: { 200: jsonContent(VariableChangeResultSchema, "What changed, name by name (never a value).") },
};

export const restoreVersion = {
  method: "post" as const,
  tags: ["Variables"],
  summary: "Restore a version of a scope's variables",
  description:
    "The scope's variables become exactly what they were right after `{version}` (names, types " +
    "and values) as one new version, or none when they already are. `dry_run: true` answers the result and " +
    "changes nothing. A version not made yet is `404`. Needs the project role `contributor` or above.",
  request: { body: optionalJsonBody(VariableRestoreSchema) },
  responses: { 200: jsonContent(VariableChangeResultSchema, "What changed, name by name (never a value).") },
};
