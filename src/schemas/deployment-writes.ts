/**
 * What creates a deployment and reports its progress (API_CONTRACT §9, §23): the engine's create
 * and report, the API's create. Apart from the record (./deployment.ts), which every deployment
 * operation builds: a read builds none of these (`npm run check:deploy` holds it); a redeploy's
 * and a promotion's options are ./promotion-writes.ts.
 */
import * as z from "zod";
import { MAX_BODY_BYTES } from "../http/raw-body";
import { freeArray, freeString, IdSchema, nullAsAbsent } from "../openapi/primitives";
import {
  type DeploymentSourceSchema,
  DeploymentStatusSchema,
  GIT_PROVIDERS,
  PatchOperationSchema,
  text,
} from "./deployment";

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
  stack_ids: freeArray(IdSchema)
    .refine((ids) => new Set(ids).size === ids.length, "Stack IDs must be distinct.")
    .openapi({ uniqueItems: true }),
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
