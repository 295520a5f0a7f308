/** Internal bodies of deployments: the engine creates them and reports their progress (API_CONTRACT §9). */
import { z } from "@hono/zod-openapi";
import { IdSchema } from "../../../http/openapi";
import { freeString } from "../../../http/text";
import {
  DeploymentDataSchema,
  DeploymentSourceSchema,
  DeploymentStatusSchema,
} from "../../../schemas/deployment";

/** The engine creates a deployment… */
export const DeploymentCreateBody = z.strictObject({
  stack_ids: z
    .array(IdSchema)
    .min(1)
    .max(100)
    .refine((ids) => new Set(ids).size === ids.length, "Stack IDs must be distinct."),
  data: z.strictObject({
    patch: DeploymentDataSchema.shape.patch,
    source: DeploymentSourceSchema.optional(),
  }),
});

/** …and reports its progress. */
export const DeploymentUpdateBody = z.strictObject({
  status: DeploymentStatusSchema,
  stacks: z
    .array(
      z.strictObject({
        id: IdSchema,
        status: DeploymentStatusSchema,
        // A plain string (SPEC.md): bounded only by the body and the deployment's row (deployment-transitions).
        status_reason: freeString().nullable().optional(),
      }),
    )
    .max(100)
    .refine((items) => new Set(items.map((s) => s.id)).size === items.length, "Stack IDs must be distinct.")
    .optional(),
});
