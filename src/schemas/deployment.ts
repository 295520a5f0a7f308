/**
 * The deployment record and its nested `data` (SPEC.md "Deployment", API_CONTRACT §3), and the
 * engine's bodies that create a deployment and report its progress (§9): below both routes and
 * services, so the service's types (the schemas' `z.infer`) and the API's schemas are one thing.
 * The same schemas validate the engine's input (strict: an unknown field is `bad_input`)
 * and document the public output, so the two can never disagree.
 */
import { z } from "@hono/zod-openapi";
import { DEPLOYMENT_STATUSES } from "../db/schema";
import { MAX_BODY_BYTES } from "../http/raw-body";
import {
  freeArray,
  freeString,
  IdSchema,
  InlineIdSchema,
  nullAsAbsent,
  TimestampSchema,
  WELL_FORMED_PATTERN,
} from "../openapi/primitives";
import { DeploymentConfigSchema } from "./config";

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
const text = () => WELL_FORMED_FREE;

export const DeploymentGateSchema = z
  .object({
    required_approvals: z.number().int().min(0).max(6),
    approvals: z.number().int().min(0).openapi({ description: "Distinct accounts that approved it." }),
    wait_until: TimestampSchema.nullable().openapi({
      description: "Its creation plus the wait timer, or null.",
    }),
    blocked_by: z
      .array(z.enum(["approval", "wait_timer", "lock"]))
      .openapi({ description: "What still holds it; empty once released." }),
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

/** A copy of `value` without the object members that are `null` (at any depth). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, member]) => member !== null)
      .map(([key, member]) => [key, withoutNulls(member)]),
  );
}

/**
 * What a create sends (the engine's, and §23's from the API): the record's source and patch, with
 * every optional field also taking `null` as "not given" (the API's rule for an optional field),
 * which the document says of each. Its own schemas, apart from the record's: the record never
 * holds a null there (optional keys of `data` are omitted, §3).
 */
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const GitPersonInputSchema = z
  .strictObject({
    email: nullable(text()),
    id: nullable(text()),
    login: nullable(text()),
    name: nullable(text()),
  })
  .openapi("GitPersonInput");

const DeploymentSourceInputSchema = z
  .strictObject({
    git: nullable(
      z.strictObject({
        commit: z.strictObject({
          author: GitPersonInputSchema,
          committer: GitPersonInputSchema,
          message: text(),
          sha: text(),
        }),
        installation_id: text(),
        owner: text(),
        provider: z.enum(GIT_PROVIDERS),
        pull_request: nullable(text()),
        ref: text(),
        repo: text(),
        repo_id: text(),
      }),
    ),
    registry: nullable(z.strictObject({ command: nullable(freeArray(text())), image: text() })),
  })
  .openapi("DeploymentSourceInput");

const PatchOperationInputSchema = z
  .strictObject({
    op: PatchOperationSchema.shape.op,
    path: PatchOperationSchema.shape.path,
    // `from` null is "not given"; `value` and `old_value` keep their nulls (JSON values).
    from: nullAsAbsent(text()).openapi({ description: "The source location (`move`, `copy`)." }),
    value: PatchOperationSchema.shape.value,
    old_value: PatchOperationSchema.shape.old_value,
  })
  .openapi("DeploymentPatchOperationInput");

/** The engine creates a deployment… */
export const DeploymentCreateBody = z.strictObject({
  stack_ids: freeArray(IdSchema).refine(
    (ids) => new Set(ids).size === ids.length,
    "Stack IDs must be distinct.",
  ),
  data: z.strictObject({
    patch: freeArray(PatchOperationInputSchema),
    // `null` for the source or any of its optional fields is "not given" (kept absent, §3): the
    // nulls are dropped before it is read, so what is kept is the record's own shape.
    source: z
      .preprocess(withoutNulls, DeploymentSourceInputSchema.nullable())
      .optional()
      .transform((source) => (source ?? undefined) as z.output<typeof DeploymentSourceSchema> | undefined),
  }),
});

/**
 * A deployment started from the API (API_CONTRACT §23): the engine's body, `stack_ids` optional
 * (left out or null: every stack of the environment, in creation order).
 */
export const PublicDeploymentCreateBody = DeploymentCreateBody.extend({
  stack_ids: nullAsAbsent(DeploymentCreateBody.shape.stack_ids),
}).openapi("DeploymentCreate");

/** A redeploy's options (API_CONTRACT §20, §24). */
export const RedeployBody = z
  .strictObject({
    config: nullAsAbsent(
      z.enum(["pinned", "current"]).openapi({
        description:
          "`pinned` (the default when the original has a configuration): the original's configuration, so running " +
          "an older deployment again rolls back its code and its configuration together. `current` (the default " +
          "when it has none): the variable versions as they are now.",
      }),
    ),
  })
  .openapi("RedeployRequest");

export type RedeployInput = z.infer<typeof RedeployBody>;

/** A promotion (API_CONTRACT §25). */
export const PromoteBody = z
  .strictObject({
    environment_id: InlineIdSchema.openapi({
      description: "Another environment of the deployment's project.",
    }),
    dry_run: nullAsAbsent(
      z.boolean().openapi({ description: "Answer the plan (`200`) and change nothing.", default: false }),
    ),
  })
  .openapi("PromoteRequest");

export type PromoteInput = z.infer<typeof PromoteBody>;

export const PromotionPlanSchema = z
  .object({
    dry_run: z.literal(true),
    environment_id: InlineIdSchema,
    stacks: z.array(z.object({ from: InlineIdSchema, to: InlineIdSchema })).openapi({
      description: "Each stack of the original (in `stack_ids` order) and the target's stack it maps to.",
    }),
    variables: z
      .array(
        z.object({
          scope: z.union([
            z.object({ type: z.literal("environment") }),
            z.object({ type: z.literal("component"), name: z.string() }),
          ]),
          missing: z.array(z.string()).openapi({
            description: "Names the original's configuration holds in this scope and the target lacks.",
          }),
          extra: z
            .array(z.string())
            .openapi({ description: "Names the target holds and the original's lacks." }),
        }),
      )
      .openapi({ description: "Only scopes with a difference (components matched by name); never a value." }),
  })
  .openapi("PromotionPlan");

export type PromotionPlan = z.infer<typeof PromotionPlanSchema>;

/** …and reports its progress. */
export const DeploymentUpdateBody = z.strictObject({
  status: DeploymentStatusSchema,
  // Optional; `null` is "not given", like the source's optional fields.
  stacks: nullAsAbsent(
    z
      .array(
        z.strictObject({
          id: IdSchema,
          status: DeploymentStatusSchema,
          // A plain string (SPEC.md): bounded only by the body and the deployment's row
          // (src/services/deployments/transitions.ts).
          status_reason: freeString().nullable().optional(),
        }),
      )
      .max(MAX_BODY_BYTES / 2)
      .refine(
        (items) => new Set(items.map((s) => s.id)).size === items.length,
        "Stack IDs must be distinct.",
      ),
  ),
});

export type DeploymentCreateInput = z.infer<typeof DeploymentCreateBody>;
export type DeploymentUpdateInput = z.infer<typeof DeploymentUpdateBody>;
export type PublicDeploymentCreateInput = z.infer<typeof PublicDeploymentCreateBody>;
