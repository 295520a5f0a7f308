/**
 * Protected environments (API_CONTRACT §26): an environment's protection and the reviews of
 * waiting deployments. The bodies that replace it, lock it and review are ./protection-writes.ts.
 */
import * as z from "zod";
import { CHECK_OUTCOMES, CONCURRENCY_POLICIES, REVIEW_STATES, REVIEWER_ROLES } from "../db/schema";
import { IdSchema, InlineIdSchema, TimestampSchema } from "../openapi/primitives";

export const settings = {
  required_approvals: z
    .number()
    .int()
    .min(0)
    .max(6)
    .openapi({ description: "Approvals a new deployment waits for (0: none).", format: "int32" }),
  reviewer_role: z.enum(REVIEWER_ROLES).openapi({
    description: "Who may review: project members with at least this role, and org owners and admins.",
  }),
  prevent_self_review: z
    .boolean()
    .openapi({ description: "The account that created a deployment may not review it." }),
  wait_timer: z.number().int().min(0).max(86_400).openapi({
    description: "Seconds a new deployment waits after its creation (0: none).",
    format: "int32",
  }),
  concurrency: z.enum(CONCURRENCY_POLICIES).openapi({
    description:
      "`parallel`: deployments run side by side. `serial`: while one is `in_progress` the others are not handed " +
      "to the engine. `supersede`: as `serial`, and a deployment entering `queued` cancels the older ones still " +
      "`queued` or `waiting`.",
  }),
};

/** A check name (§31): lower-case letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const CHECK_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;

export const CheckSchema = z
  .object({
    name: z.string().max(100).regex(CHECK_NAME).openapi({ example: "e2e-suite" }),
    timeout: z.number().int().min(10).max(86_400).openapi({
      description: "Seconds after `created_at` when a pending check concludes as `on_timeout` says.",
      format: "int32",
    }),
    on_timeout: z.enum(CHECK_OUTCOMES),
  })
  .openapi("EnvironmentCheck");

export const ProtectionSchema = z
  .object({
    environment_id: IdSchema,
    ...settings,
    checks: z.array(CheckSchema).max(10).openapi({ description: "What must pass before a release (§31)." }),
    locked: z
      .object({ reason: z.string(), account_id: InlineIdSchema, at: TimestampSchema })
      .nullable()
      .openapi({ description: "While locked, new deployments wait and none starts; null when not locked." }),
    updated_at: TimestampSchema.nullable().openapi({ description: "Null while it has never changed." }),
  })
  .openapi("EnvironmentProtection");

export type ProtectionRecord = z.infer<typeof ProtectionSchema>;

export const ReviewSchema = z
  .object({
    account_id: InlineIdSchema,
    state: z.enum(REVIEW_STATES),
    comment: z.string().nullable(),
    created_at: TimestampSchema,
  })
  .openapi("DeploymentReview");

export type ReviewRecord = z.infer<typeof ReviewSchema>;
