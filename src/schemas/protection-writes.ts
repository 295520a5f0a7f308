/** The bodies that replace an environment's protection, lock it, and review a waiting deployment (API_CONTRACT §26). */
import { z } from "@hono/zod-openapi";
import { REVIEW_STATES } from "../db/schema";
import { echoedReadOnlyFields, nullAsAbsent, text } from "../openapi/primitives";
import { ProtectionSchema, settings } from "./protection";

export const ProtectionReplaceSchema = z
  .strictObject({
    ...echoedReadOnlyFields(ProtectionSchema, [
      "required_approvals",
      "reviewer_role",
      "prevent_self_review",
      "wait_timer",
      "concurrency",
    ]),
    ...settings,
  })
  .openapi("EnvironmentProtectionReplace", {
    description:
      "The five settings, all required. The record's read-only fields may be sent back as read; they change " +
      "nothing (the lock has its own operations), and `environment_id` must match.",
  });

export type ProtectionReplaceInput = z.infer<typeof ProtectionReplaceSchema>;

export const LockSchema = z
  .strictObject({
    reason: text(1, 500).openapi({ description: "Why: shown to everyone the lock holds up." }),
  })
  .openapi("EnvironmentLock");

export type LockInput = z.infer<typeof LockSchema>;

export const ReviewCreateSchema = z
  .strictObject({
    state: z.enum(REVIEW_STATES).openapi({ description: "`rejected` cancels the deployment at once." }),
    comment: nullAsAbsent(text(0, 1000)),
  })
  .openapi("DeploymentReviewCreate");

export type ReviewInput = z.infer<typeof ReviewCreateSchema>;
