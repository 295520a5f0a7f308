/**
 * The MCP server's tools: the jobs a release asks of an assistant (find a project, its
 * environments and deployments; read a deployment and the end of its timeline; wait for one;
 * start one; promote one after its plan; plan and apply a variable change; list a scope's versions
 * and restore one; lock and unlock an environment; review a waiting deployment), each one or a few
 * calls of the API's own operations (./api.ts).
 *
 * Each tool declares its arguments (a strict zod object: an argument it does not name is refused,
 * as the API refuses an unknown field), what it answers (`structuredContent`, described by the
 * API's own record schemas, so a tool's answer is the API's record as /openapi.json publishes it),
 * and hints for the client: `readOnlyHint` for what changes nothing (the plans and dry runs too),
 * `destructiveHint` for what can replace or undo something (a deployment replaces what runs, an
 * unlock or an approval lets waiting deployments run, a rejection cancels one), `idempotentHint`
 * for what a repeat leaves as it was.
 */
import { z } from "@hono/zod-openapi";
import { DEPLOYMENT_STATUSES, REVIEW_STATES, VARIABLE_TYPES } from "../db/schema";
import { MAX_NAME_LENGTH, VARIABLE_NAME } from "../lib/dotenv";
import { ID_PATTERN } from "../lib/ids";
import {
  DeploymentSchema,
  DeploymentSourceSchema,
  PatchOperationSchema,
  PromotionPlanSchema,
} from "../schemas/deployment";
import { ProjectSchema } from "../schemas/project";
import { ProtectionSchema } from "../schemas/protection";
import { MAX_TIMELINE_ENTRIES, TimelineEntrySchema } from "../schemas/timeline";
import { EnvironmentSchema } from "../schemas/topology";
import { MAX_CHANGE_NAMES, VariableChangeResultSchema, VariableVersionSchema } from "../schemas/variable-set";
import type { Api } from "./api";

export type ToolAnnotations = {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
};

export type Tool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> = {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run: (api: Api, args: z.output<I>) => Promise<z.output<O>>;
};

/** A tool, its `run` checked against its own schemas; then one of a list of tools of any schemas. */
const tool = <I extends z.ZodObject, O extends z.ZodObject>(t: Tool<I, O>) => t as unknown as Tool;

// Hints. Nothing here reaches past this API's own records (`openWorldHint` false).
const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
const write = (destructive: boolean, idempotent = false): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

// Arguments. An identifier is checked here, before it becomes a path segment of an API call.
const id = (what: string) =>
  z.string().regex(ID_PATTERN, "Must be an identifier.").describe(`The ${what}'s ID.`);
const limit = (max: number, fallback: number) =>
  z.number().int().min(1).max(max).default(fallback).describe(`Page size, 1–${max} (default ${fallback}).`);
const after = z
  .string()
  .max(1024)
  .regex(/^[\w\-+/=]+$/, "Must be a `next_page` from a previous answer.")
  .optional()
  .describe("The `next_page` of the previous page, to read on.");
const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7E]{1,255}$/, "1–255 printable ASCII characters, no space.")
  .optional()
  .describe(
    "Sent as the write's Idempotency-Key: calling again with the same key and arguments (within 24 h) " +
      "answers the first call's result instead of acting twice. Default: a new key for every call.",
  );
const newKey = (given: string | undefined) => given ?? `mcp-${crypto.randomUUID()}`;
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

// Answers: the API's records.
const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    has_more: z.boolean(),
    next_page: z.string().optional().describe("Pass as `after` to read the next page."),
  });
const deploymentAnswer = z.object({ deployment: DeploymentSchema });
const FINAL = new Set(["succeeded", "failed", "cancelled"]);

type Page<T> = { data: T[]; has_more: boolean; next_page?: string };
type Entry = z.output<typeof TimelineEntrySchema>;

/** A timeline's page size at most (API_CONTRACT §19). */
const TIMELINE_PAGE = 1000;

/**
 * The last `count` entries of a deployment's timeline, and its length. The timeline is read forward
 * only (`after_seq`), but its `seq` are 1, 2, 3… without gaps, so one entry after `x` says the
 * timeline is longer than `x`: a timeline of one page costs one call; a longer one a binary search
 * for its end (a timeline holds at most 100,000 entries: at most 7 one-entry calls), then one page.
 */
async function timelineTail(api: Api, deploymentId: string, count: number) {
  const path = `/v1/deployments/${deploymentId}/timeline`;
  const read = (afterSeq: number, size: number) =>
    api.call<Page<Entry>>("GET", path, { query: { after_seq: afterSeq, limit: size } });
  let last = await read(0, TIMELINE_PAGE);
  if (last.has_more) {
    // The end lies in (low, high]: the last entry read is there, and no timeline is longer than the cap.
    let low = last.data.at(-1)?.seq ?? 0;
    let high = MAX_TIMELINE_ENTRIES;
    while (high - low > TIMELINE_PAGE - count) {
      const middle = Math.floor((low + high) / 2);
      const probe = await read(middle, 1);
      if (probe.data.length > 0) low = middle + 1;
      else high = middle;
    }
    last = await read(Math.max(0, low - count), TIMELINE_PAGE);
  }
  return { length: last.data.at(-1)?.seq ?? 0, tail: last.data.slice(-count) };
}

export const TOOLS: readonly Tool[] = [
  tool({
    name: "list_projects",
    title: "List projects",
    description: "The projects of the key's organization that the key may see, newest first.",
    input: z.strictObject({ limit: limit(240, 20), after }),
    output: page(ProjectSchema),
    annotations: READ,
    run: (api, a) => api.call("GET", "/v1/projects", { query: { limit: a.limit, after: a.after } }),
  }),
  tool({
    name: "list_environments",
    title: "List a project's environments",
    description:
      "A project's environments, newest first: each with `current_deployment_id` (its latest successful " +
      "deployment) and `config_pending` (a variable changed since: a deployment would bring it).",
    input: z.strictObject({ project_id: id("project"), limit: limit(240, 20), after }),
    output: page(EnvironmentSchema),
    annotations: READ,
    run: (api, a) =>
      api.call("GET", `/v1/projects/${a.project_id}/environments`, {
        query: { limit: a.limit, after: a.after },
      }),
  }),
  tool({
    name: "get_environment",
    title: "Read an environment and its protection",
    description:
      "An environment and its protection: approvals required, who reviews, wait timer, concurrency, and its " +
      "lock (null when unlocked).",
    input: z.strictObject({ environment_id: id("environment") }),
    output: z.object({ environment: EnvironmentSchema, protection: ProtectionSchema }),
    annotations: READ,
    run: async (api, a) => {
      const [environment, protection] = await Promise.all([
        api.call<z.output<typeof EnvironmentSchema>>("GET", `/v1/environments/${a.environment_id}`),
        api.call<z.output<typeof ProtectionSchema>>("GET", `/v1/environments/${a.environment_id}/protection`),
      ]);
      return { environment, protection };
    },
  }),
  tool({
    name: "list_deployments",
    title: "List deployments",
    description:
      "Deployments, newest first: of one environment, or of every project the key may see; optionally only " +
      "those in some statuses (`waiting` ones are held by their environment's protection).",
    input: z.strictObject({
      environment_id: id("environment").optional().describe("Only this environment's deployments."),
      status: z
        .array(z.enum(DEPLOYMENT_STATUSES))
        .min(1)
        .optional()
        .describe("Only deployments in one of these statuses."),
      limit: limit(240, 20),
      after,
    }),
    output: page(DeploymentSchema),
    annotations: READ,
    run: (api, a) =>
      api.call(
        "GET",
        a.environment_id === undefined
          ? "/v1/deployments"
          : `/v1/environments/${a.environment_id}/deployments`,
        { query: { status: a.status?.join(","), limit: a.limit, after: a.after } },
      ),
  }),
  tool({
    name: "get_deployment",
    title: "Read a deployment and the end of its timeline",
    description:
      "A deployment (status, stacks, gate, configuration) and the last entries of its timeline: its status " +
      "changes, its stacks' and the engine's log lines, in order.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      timeline_tail: z
        .number()
        .int()
        .min(0)
        .max(100)
        .default(20)
        .describe("How many of the timeline's last entries (0–100, default 20)."),
    }),
    output: z.object({
      deployment: DeploymentSchema,
      timeline: z.object({
        length: z.number().int().describe("How many entries the timeline holds."),
        tail: z.array(TimelineEntrySchema).describe("Its last entries, oldest first."),
      }),
    }),
    annotations: READ,
    run: async (api, a) => {
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "GET",
        `/v1/deployments/${a.deployment_id}`,
      );
      const timeline =
        a.timeline_tail === 0
          ? { length: 0, tail: [] }
          : await timelineTail(api, a.deployment_id, a.timeline_tail);
      return { deployment, timeline };
    },
  }),
  tool({
    name: "wait_for_deployment",
    title: "Wait for a deployment to finish",
    description:
      "Answers as soon as the deployment is final (succeeded, failed, cancelled), or as it stands after " +
      "`timeout_seconds`; call again to wait longer.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      // The API waits up to 60 s; MCP clients commonly give up on a call after 60 s.
      timeout_seconds: z
        .number()
        .min(1)
        .max(50)
        .default(30)
        .describe("Seconds to wait at most, 1–50 (default 30)."),
    }),
    output: z.object({
      deployment: DeploymentSchema,
      final: z.boolean().describe("Whether the deployment has finished."),
    }),
    annotations: READ,
    run: async (api, a) => {
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "GET",
        `/v1/deployments/${a.deployment_id}/wait`,
        { query: { timeout: a.timeout_seconds } },
      );
      return { deployment, final: FINAL.has(deployment.status) };
    },
  }),
  tool({
    name: "start_deployment",
    title: "Start a deployment",
    description:
      "Starts a deployment in an environment: `queued` for the engine, or `waiting` while the environment's " +
      "protection holds it (approvals, wait timer, lock). It runs with the environment's variables as they are now.",
    input: z.strictObject({
      environment_id: id("environment"),
      stack_ids: z
        .array(id("stack"))
        .min(1)
        .optional()
        .describe("The stacks to deploy; left out: every stack of the environment."),
      patch: z
        .array(PatchOperationSchema)
        .default([])
        .describe("The change to deploy, as RFC 6902 operations."),
      source: DeploymentSourceSchema.optional().describe("Where the code comes from (git or registry)."),
      idempotency_key: idempotencyKey,
    }),
    output: deploymentAnswer,
    annotations: write(true),
    run: async (api, a) => {
      const data = { patch: a.patch, ...(a.source === undefined ? {} : { source: a.source }) };
      const body = { data, ...(a.stack_ids === undefined ? {} : { stack_ids: a.stack_ids }) };
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "POST",
        `/v1/environments/${a.environment_id}/deployments`,
        { body, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { deployment };
    },
  }),
  tool({
    name: "plan_promotion",
    title: "Plan a promotion (dry run)",
    description:
      "What promoting a succeeded deployment to another environment of its project would do, changing " +
      "nothing: each stack and the target's stack it maps to, and the variable names the target lacks or " +
      "holds beyond the deployment's configuration. Refused as the promotion would be.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      environment_id: id("target environment"),
    }),
    output: PromotionPlanSchema,
    annotations: READ,
    run: (api, a) =>
      api.call("POST", `/v1/deployments/${a.deployment_id}/promote`, {
        body: { environment_id: a.environment_id, dry_run: true },
      }),
  }),
  tool({
    name: "promote_deployment",
    title: "Promote a deployment",
    description:
      "Deploys what a succeeded deployment deployed (the same change and source, nothing rebuilt) to another " +
      "environment of its project, with that environment's own variables. Plan it first (plan_promotion).",
    input: z.strictObject({
      deployment_id: id("deployment"),
      environment_id: id("target environment"),
      idempotency_key: idempotencyKey,
    }),
    output: deploymentAnswer,
    annotations: write(true),
    run: async (api, a) => {
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "POST",
        `/v1/deployments/${a.deployment_id}/promote`,
        { body: { environment_id: a.environment_id }, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { deployment };
    },
  }),
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
  tool({
    name: "lock_environment",
    title: "Lock an environment",
    description:
      "Holds every new deployment of the environment as `waiting` and keeps queued ones from starting, until " +
      "unlocked; deployments already in progress finish. Refused when already locked.",
    input: z.strictObject({
      environment_id: id("environment"),
      reason: z.string().min(1).max(500).describe("Why: shown to everyone the lock holds up."),
      idempotency_key: idempotencyKey,
    }),
    output: z.object({ protection: ProtectionSchema }),
    annotations: write(false),
    run: async (api, a) => {
      const protection = await api.call<z.output<typeof ProtectionSchema>>(
        "POST",
        `/v1/environments/${a.environment_id}/lock`,
        { body: { reason: a.reason }, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { protection };
    },
  }),
  tool({
    name: "unlock_environment",
    title: "Unlock an environment",
    description:
      "Removes the environment's lock (done whether it was locked or not): every deployment nothing else holds " +
      "is released and runs.",
    input: z.strictObject({ environment_id: id("environment"), idempotency_key: idempotencyKey }),
    output: z.object({ environment_id: z.string(), locked: z.literal(false) }),
    annotations: write(true, true),
    run: async (api, a) => {
      await api.call("DELETE", `/v1/environments/${a.environment_id}/lock`, {
        idempotencyKey: newKey(a.idempotency_key),
      });
      return { environment_id: a.environment_id, locked: false as const };
    },
  }),
  tool({
    name: "review_deployment",
    title: "Approve or reject a waiting deployment",
    description:
      "Reviews a deployment waiting for approval: `approved` counts toward its environment's required " +
      "approvals (the last one releases it), `rejected` cancels it at once. One review per account.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      state: z.enum(REVIEW_STATES),
      comment: z.string().max(1000).optional().describe("Why (at most 1000 characters)."),
      idempotency_key: idempotencyKey,
    }),
    output: deploymentAnswer,
    annotations: write(true),
    run: async (api, a) => {
      const body = { state: a.state, ...(a.comment === undefined ? {} : { comment: a.comment }) };
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "POST",
        `/v1/deployments/${a.deployment_id}/reviews`,
        { body, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { deployment };
    },
  }),
];
