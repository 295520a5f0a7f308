/**
 * Running a deployment again and promoting it (API_CONTRACT §20, §24, §25): their options, and
 * the plan a promotion's dry run answers.
 */
import * as z from "zod";
import { InlineIdSchema, nullAsAbsent } from "../openapi/primitives";

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
