/**
 * What the ten operations of variable sets (API_CONTRACT §18) share: each exists under an
 * environment and under a component, with the same request, answers and documentation; only the
 * path, its parameter and the operationId name the kind of scope. One file per operation beside
 * this one declares the route (its operationId written out, so a grep finds it). What only the four
 * writing ones need (the request bodies, the change's answer) is ./set-writes.ts, so that a read
 * builds none of it.
 */

import type { Context, TypedResponse } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../http/app-env";
import { NO_STORE_HEADER } from "../../openapi/components";
import { jsonContent } from "../../openapi/define-route";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { VariableVersionSchema } from "../../schemas/variable-set";
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

export const SCOPE_NOTE =
  "A scope is an environment's own variables (`component_id` null) or one component's; every operation on a " +
  "scope exists under both paths.";

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

/** A dotenv file is a secret: no cache may keep it (the answer is untagged, as a reveal's is). */
const DOTENV_HEADERS = { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" };

/** An export's answer: the file as a whole text, or a larger one as the stream that sends it (services/variables/export.ts). */
export const dotenvResponse = (c: Context<AppEnv>, file: string | ReadableStream<Uint8Array>) =>
  typeof file === "string"
    ? c.text(file, 200, DOTENV_HEADERS)
    : // The same text/plain body as the route declares, sent as it is read.
      (new Response(file, { status: 200, headers: DOTENV_HEADERS }) as Response &
        TypedResponse<string, 200, "text">);

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
