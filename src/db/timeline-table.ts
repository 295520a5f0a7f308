/**
 * A deployment's timeline (API_CONTRACT §19). Part of the one schema: src/db/schema.ts
 * re-exports it, and drizzle-kit reads it through it.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { deployments } from "./core-tables";
import { DEPLOYMENT_STATUSES, LOG_STREAMS, TIMELINE_ENTRY_TYPES } from "./values";

/**
 * Every status change of a deployment and of its stacks, and the engine's log lines, numbered
 * `seq` 1, 2, 3… per deployment. `seq` is computed by the statement that inserts the entry
 * (`max(seq) + 1`, in the same D1 batch — one transaction — as the change it records), so the
 * numbers have no gaps whoever writes at once; the primary key makes a duplicate impossible
 * and serves every read (a page is a range of it) and the cascade from the deployment.
 */
export const deploymentTimeline = sqliteTable(
  "deployment_timeline",
  {
    deploymentId: text("deployment_id")
      .notNull()
      .references(() => deployments.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    type: text("type", { enum: TIMELINE_ENTRY_TYPES }).notNull(),
    createdAt: text("created_at").notNull(),
    stackId: text("stack_id"),
    status: text("status", { enum: DEPLOYMENT_STATUSES }),
    statusReason: text("status_reason"),
    stream: text("stream", { enum: LOG_STREAMS }),
    message: text("message"),
  },
  (t) => [
    primaryKey({ columns: [t.deploymentId, t.seq] }),
    // Retention's way in (src/services/deployments/timeline-retention.ts): the entry of a
    // deployment's own final status, whose `created_at` is its `finished_at`; deleted after the
    // rest of its timeline, so a timeline partly purged is still found.
    index("deployment_timeline_finished_idx")
      .on(t.createdAt)
      .where(sql`stack_id IS NULL AND status IN ('succeeded', 'failed', 'cancelled')`),
  ],
);
