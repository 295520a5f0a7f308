/** Internal bodies of deployments: the engine creates them and reports their progress (API_CONTRACT §9). */
import { z } from "@hono/zod-openapi";
import { MAX_BODY_BYTES } from "../../../http/raw-body";
import { freeArray, freeString, IdSchema, nullAsAbsent } from "../../../openapi/primitives";
import {
  DeploymentSourceSchema,
  DeploymentStatusSchema,
  PatchOperationSchema,
} from "../../../schemas/deployment";

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

/** The engine creates a deployment… */
export const DeploymentCreateBody = z.strictObject({
  stack_ids: freeArray(IdSchema).refine(
    (ids) => new Set(ids).size === ids.length,
    "Stack IDs must be distinct.",
  ),
  data: z.strictObject({
    // A patch item's `from` null is "not given"; `value` and `old_value` keep their nulls (JSON values).
    patch: freeArray(PatchOperationSchema.extend({ from: nullAsAbsent(PatchOperationSchema.shape.from) })),
    // `null` for the source or any of its optional fields is "not given" (kept absent, §3).
    source: nullAsAbsent(z.preprocess(withoutNulls, DeploymentSourceSchema)),
  }),
});

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
          // A plain string (SPEC.md): bounded only by the body and the deployment's row (deployment-transitions).
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
