/**
 * A release's way to production (API_CONTRACT §25, §26): each environment's protection and the
 * reviews of its waiting deployments. Part of the one schema: src/db/schema.ts re-exports it.
 */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { deployments, environmentRef, projectRef } from "./core-tables";

export const REVIEWER_ROLES = ["owner", "contributor"] as const;
export type ReviewerRole = (typeof REVIEWER_ROLES)[number];
export const CONCURRENCY_POLICIES = ["parallel", "serial", "supersede"] as const;
export type ConcurrencyPolicy = (typeof CONCURRENCY_POLICIES)[number];
export const CHECK_OUTCOMES = ["fail", "pass"] as const;
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];
/** A check of a protection (§31): what must pass before a deployment of the environment is released. */
export type ProtectionCheck = { name: string; timeout: number; on_timeout: CheckOutcome };
export const REVIEW_STATES = ["approved", "rejected"] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

/**
 * An environment's protection (§26). An environment without a row has the defaults (nothing
 * required, not locked): the row is written by the first PUT or lock, so an unprotected
 * environment costs nothing to hold or to read.
 */
export const environmentProtections = sqliteTable(
  "environment_protections",
  {
    environmentId: environmentRef().primaryKey(),
    projectId: projectRef(),
    requiredApprovals: integer("required_approvals").notNull(),
    reviewerRole: text("reviewer_role", { enum: REVIEWER_ROLES }).notNull(),
    preventSelfReview: integer("prevent_self_review", { mode: "boolean" }).notNull(),
    waitTimer: integer("wait_timer").notNull(),
    concurrency: text("concurrency", { enum: CONCURRENCY_POLICIES }).notNull(),
    lockedReason: text("locked_reason"),
    lockedAccountId: text("locked_account_id"),
    lockedAt: text("locked_at"),
    updatedAt: text("updated_at"),
    /** Its deployment checks (API_CONTRACT §31), copied into each deployment's gate at its creation. */
    checks: text("checks", { mode: "json" }).$type<ProtectionCheck[]>().notNull().default([]),
    /**
     * When `concurrency` took the value it has (a PUT that changes it; null: since the row was
     * written by a lock, `parallel`): `supersede` is owed by the deployments that entered `queued`
     * since (src/services/deployments/gate-rules.ts `owesCancel`), whatever else changed meanwhile.
     */
    concurrencySince: text("concurrency_since"),
  },
  (t) => [index("environment_protections_project_idx").on(t.projectId)],
);

/** One review of a waiting deployment per account (§26): the primary key refuses a second. */
export const deploymentReviews = sqliteTable(
  "deployment_reviews",
  {
    deploymentId: text("deployment_id")
      .notNull()
      .references(() => deployments.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    projectId: projectRef(),
    state: text("state", { enum: REVIEW_STATES }).notNull(),
    comment: text("comment"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.deploymentId, t.accountId] }),
    index("deployment_reviews_created_idx").on(t.deploymentId, t.createdAt, t.accountId),
    index("deployment_reviews_project_idx").on(t.projectId),
  ],
);
