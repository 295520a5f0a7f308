/**
 * What the ten operations of variable sets (API_CONTRACT §18) share: each exists under an
 * environment and under a component, with the same request, answers and documentation; only the
 * path, its parameter and the operationId name the kind of scope. One file per operation beside
 * this one declares the route (its operationId written out, so a grep finds it).
 */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { NO_STORE_HEADER } from "../../openapi/components";
import { jsonBody, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import {
  VariableChangeResultSchema,
  VariableChangesSchema,
  VariableRestoreSchema,
  VariableSetEntrySchema,
  VariableVersionSchema,
} from "../../schemas/variable-set";
import type { VariableParent } from "../../services/variables/parent";

const VariableVersionListSchema = envelope(VariableVersionSchema, "VariableVersionList");

export const ENVIRONMENT_VARIABLES = "/v1/environments/{environment_id}/variables";
export const COMPONENT_VARIABLES = "/v1/components/{component_id}/variables";

export const environmentOf = (p: { environment_id: string }): VariableParent => ({
  kind: "environment",
  id: p.environment_id,
});
export const componentOf = (p: { component_id: string }): VariableParent => ({
  kind: "component",
  id: p.component_id,
});

/** `{version}`: a positive integer (digits only: `Number()` alone would take " 5", "0x10", "1e1"). */
const VersionSchema = z
  .string()
  .regex(/^[0-9]+$/, "Must be a positive integer.")
  .transform(Number)
  .refine((n) => n >= 1, "Must be a positive integer.")
  .openapi({
    param: { name: "version", in: "path" },
    type: "integer",
    format: "int64",
    minimum: 1,
    // The largest version a JSON number holds exactly; a larger one is a positive integer not made
    // yet, answered 404 as any other (API_CONTRACT §18).
    maximum: Number.MAX_SAFE_INTEGER,
    description: "A version of the scope: 1, 2, 3…",
    example: 3,
  });

export const EnvironmentVersionParams = idParams("environment_id").extend({ version: VersionSchema });
export const ComponentVersionParams = idParams("component_id").extend({ version: VersionSchema });

const SCOPE_NOTE =
  "A scope is an environment's own variables (`component_id` null) or one component's; every operation on a " +
  "scope exists under both paths.";

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

export const listVersions = {
  method: "get" as const,
  tags: ["Variables"],
  summary: "List the versions of a scope's variables",
  description:
    "Every change to the scope (changes and restores of the scope, and each single variable's " +
    "create, replace and delete) made one version, 1, 2, 3… `created_at` order is version order; newest " +
    "first by default. Never a value. Needs the project role `viewer` or above.",
  responses: { 200: jsonContent(VariableVersionListSchema, "A page of versions.") },
};

export const getVersion = {
  method: "get" as const,
  tags: ["Variables"],
  summary: "Read one version of a scope's variables",
  description:
    "Who changed which names, when. `{version}` not a positive integer is `400`; a version " +
    "not made yet is `404`. Needs the project role `viewer` or above.",
  responses: { 200: jsonContent(VariableVersionSchema, "The version.") },
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

/** A dotenv file is a secret: no cache may keep it (the answer is untagged, as a reveal's is). */
export const DOTENV_HEADERS = { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" };

export const exportVariables = {
  method: "get" as const,
  tags: ["Variables"],
  summary: "Export a scope's variables as a dotenv file",
  description:
    `Every variable, every type, as \`NAME="value"\` lines sorted by name (\`\\\\\`, \`"\`, newline ` +
    'and carriage return escaped as `\\\\`, `\\"`, `\\n`, `\\r`); an empty scope is an empty body. Importing it ' +
    "with `mode: replace` and the scope's type changes nothing. A reveal: it is recorded in the audit log " +
    "(the names, never a value), counts against the `reveal` rate-limit policy, and is marked " +
    "`Cache-Control: no-store`. Needs the project role `contributor` or above and the scope `variables:reveal`.",
  rateLimit: "reveal" as const,
  scope: "variables:reveal" as const,
  responses: {
    200: {
      description: "The scope as a dotenv file (UTF-8).",
      headers: NO_STORE_HEADER,
      content: {
        "text/plain": {
          // Named: both scope kinds answer it, and clients name its type after it.
          schema: z.string().openapi("Dotenv", {
            description: 'A dotenv file: one `NAME="value"` line per variable, sorted by name.',
            example: 'API_URL="https://api.example.com"\nDATABASE_URL="postgres://app@db:5432/app"\n',
          }),
        },
      },
    },
  },
};
