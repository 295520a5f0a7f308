/**
 * The deployment record and its nested `data` (SPEC.md "Deployment", API_CONTRACT §3), and the
 * engine's bodies that create a deployment and report its progress (§9): below both routes and
 * services, so the service's types (the schemas' `z.infer`) and the API's schemas are one thing.
 * The same schemas validate the engine's input (strict: an unknown field is `bad_input`)
 * and document the public output, so the two can never disagree.
 */
import * as z from "zod";
import { DEPLOYMENT_STATUSES } from "../db/schema";
import {
  freeArray,
  freeString,
  IdSchema,
  InlineIdSchema,
  TimestampSchema,
  WELL_FORMED_PATTERN,
} from "../openapi/primitives";

export const PATCH_OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;
export const GIT_PROVIDERS = ["github", "gitlab", "bitbucket"] as const;

export const DeploymentStatusSchema = z.enum(DEPLOYMENT_STATUSES).openapi("DeploymentStatus", {
  description:
    "`queued → in_progress → succeeded | failed`; `queued | in_progress → cancelled`; `waiting → queued | cancelled` " +
    "(held by its environment's protection, never handed to the engine). The last three are final.",
});

// SPEC.md types every field of a source as a plain string: no limit but the body's. The body guard
// refuses an unpaired surrogate in any string before validation (§17); published as the pattern.
const WELL_FORMED_FREE = freeString().openapi({ pattern: WELL_FORMED_PATTERN });
/** A well-formed string bounded only by the body (SPEC.md leaves it free). */
export const text = () => WELL_FORMED_FREE;

export const DeploymentGateSchema = z
  .object({
    required_approvals: z.number().int().min(0).max(6),
    approvals: z.number().int().min(0).openapi({ description: "Distinct accounts that approved it." }),
    wait_until: TimestampSchema.nullable().openapi({
      description: "Its creation plus the wait timer, or null.",
    }),
    blocked_by: z
      .array(z.enum(["approval", "wait_timer", "lock", "check"]))
      .openapi({ description: "What still holds it; empty once released." }),
    checks: z
      .array(
        z.object({
          name: z.string(),
          state: z.enum(["pending", "passed", "failed"]),
          reason: z.enum(["timeout"]).nullable(),
          details_url: z.string().nullable(),
          summary: z.string().nullable(),
          concluded_at: TimestampSchema.nullable(),
        }),
      )
      .openapi({ description: "The protection's checks at its creation (§31)." }),
  })
  .openapi("DeploymentGate");

export const PatchOperationSchema = z
  .strictObject({
    op: z.enum(PATCH_OPS).openapi({ description: "An RFC 6902 operation." }),
    // Plain strings (SPEC.md): the engine's own locations, kept as sent (an RFC 6901 pointer or not).
    path: text().openapi({ description: "The location the operation applies to." }),
    from: text().optional().openapi({ description: "The source location (`move`, `copy`)." }),
    value: z.unknown().optional().openapi({ description: "The value (`add`, `replace`, `test`)." }),
    old_value: z.unknown().optional().openapi({ description: "The value before the change, if known." }),
  })
  .openapi("DeploymentPatchOperation");

const GitPersonSchema = z
  .strictObject({
    email: text().optional(),
    id: text().optional(),
    login: text().optional(),
    name: text().optional(),
  })
  .openapi("GitPerson");

export const GitSourceSchema = z
  .strictObject({
    commit: z.strictObject({
      author: GitPersonSchema,
      committer: GitPersonSchema,
      message: text(),
      sha: text(),
    }),
    installation_id: text(),
    owner: text(),
    provider: z.enum(GIT_PROVIDERS),
    pull_request: text().optional(),
    ref: text(),
    repo: text(),
    repo_id: text(),
  })
  .openapi("GitSource");

export const RegistrySourceSchema = z
  .strictObject({
    command: freeArray(text()).optional(),
    image: text(),
  })
  .openapi("RegistrySource");

export const DeploymentSourceSchema = z
  .strictObject({ git: GitSourceSchema.optional(), registry: RegistrySourceSchema.optional() })
  .openapi("DeploymentSource");

export const DeploymentStackSchema = z
  .strictObject({
    id: IdSchema,
    status: DeploymentStatusSchema,
    status_reason: z.string().optional(),
    timestamp: TimestampSchema.openapi({ description: "Time of the stack's last status change." }),
  })
  .openapi("DeploymentStack");

export const DeploymentDataSchema = z
  .strictObject({
    patch: freeArray(PatchOperationSchema),
    source: DeploymentSourceSchema.optional(),
    stacks: z.array(DeploymentStackSchema).optional().openapi({
      description: "One entry per stack of `stack_ids`, kept current by the service.",
    }),
  })
  .openapi("DeploymentData", { description: "Optional keys are omitted when absent." });

/** A §18 version number (0: the scope has had no change). */
const VersionNumber = z.number().int().min(0);

export const DeploymentConfigSchema = z
  .object({
    environment_version: VersionNumber.openapi({
      description: "The §18 version of the environment's own variables.",
    }),
    components: z
      .array(z.object({ component_id: InlineIdSchema, version: VersionNumber }))
      .openapi({ description: "The version of each component's variables, by `component_id`." }),
  })
  .openapi("DeploymentConfigPins", {
    description: "The variable versions the deployment was created with (API_CONTRACT §24).",
  });

export const DeploymentSchema = z
  .object({
    id: IdSchema,
    environment_id: IdSchema,
    stack_ids: z.array(IdSchema),
    status: DeploymentStatusSchema,
    data: DeploymentDataSchema,
    started_at: TimestampSchema.nullable().openapi({ description: "When it entered `in_progress`." }),
    finished_at: TimestampSchema.nullable().openapi({ description: "When it reached a final status." }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
    redeploy_of: InlineIdSchema.nullable().openapi({ description: "The deployment it runs again, or null." }),
    config: DeploymentConfigSchema.nullable().openapi({
      description:
        "The variable versions it was created with (API_CONTRACT §24), or null for a deployment made before " +
        "configurations were recorded.",
    }),
    gate: DeploymentGateSchema.nullable().openapi({
      description:
        "What held it as `waiting` (API_CONTRACT §26), or null for a deployment that never waited.",
    }),
    promoted_from: InlineIdSchema.nullable().openapi({
      description: "The deployment of another environment it promotes (API_CONTRACT §25), or null.",
    }),
    created_by: InlineIdSchema.nullable().openapi({
      description:
        "The account of the API key that created it (creates, redeploys, promotions), or null (the engine).",
    }),
  })
  .openapi("Deployment");

export type DeploymentRecord = z.infer<typeof DeploymentSchema>;
