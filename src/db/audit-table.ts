/**
 * The audit log (API_CONTRACT §14). Part of the one schema: src/db/schema.ts re-exports it, and
 * drizzle-kit reads it through it.
 */
import { sql } from "drizzle-orm";
import {
  foreignKey,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

export const AUDIT_ACTOR_TYPES = ["api_key", "admin"] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];
export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

/**
 * Who did what (API_CONTRACT §14). Written in the same batch as the change it records, never
 * changed or deleted by a route, removed after 400 days by the daily cron. No foreign keys:
 * an entry outlives the project, key or organization it names (deleting a project must not
 * delete the record of its deletion).
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    /** Null only for what belongs to no organization (an internal account create). */
    orgId: text("org_id"),
    projectId: text("project_id"),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id").notNull(),
    actorType: text("actor_type", { enum: AUDIT_ACTOR_TYPES }).notNull(),
    actorAccountId: text("actor_account_id"),
    actorApiKeyId: text("actor_api_key_id"),
    requestId: text("request_id").notNull(),
    ip: text("ip"),
    userAgent: text("user_agent"),
    changes: text("changes", { mode: "json" }).$type<AuditChanges>(),
    createdAt: text("created_at").notNull(),
    /**
     * The entry's place in its organization's log (API_CONTRACT §30): 1 for its first entry and one
     * more for each next, in commit order, no gap, no repeat. Computed by the entry's own INSERT
     * from the organization's latest (one step down the index below), in the batch of the change it
     * records: D1 runs one batch at a time, so commit order is sequence order. Null only for an
     * entry of no organization.
     */
    sequence: integer("sequence"),
    /**
     * The `Idempotency-Key` the change ran under (API_CONTRACT §11) and its request's
     * fingerprint, written with the entry so that the key commits with the change it keyed, or
     * not at all (src/idempotency/executed.ts). Not part of the entry's record; cleared by the
     * cron once the key is 24 h old.
     */
    idempotencyKey: text("idempotency_key"),
    idempotencyFingerprint: text("idempotency_fingerprint"),
    /**
     * Set when `changes` outgrew one row (D1 refuses a row over 2,000,000 bytes; a §18 replace or
     * export lists every name it touched): `changes` is then null and its JSON is in
     * `audit_log_parts`, this many UTF-16 code units of it in all (src/db/spill.ts).
     */
    changesSpilled: integer("changes_spilled"),
  },
  (t) => [
    index("audit_log_org_created_idx").on(t.orgId, t.createdAt, t.id),
    // An organization's entries in sequence order: the next number, `after_sequence` pages, streams.
    uniqueIndex("audit_log_org_sequence_idx").on(t.orgId, t.sequence),
    // A project's entries by sequence (its audit log's `after_sequence`).
    index("audit_log_project_sequence_idx").on(t.projectId, t.sequence),
    index("audit_log_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("audit_log_created_idx").on(t.createdAt),
    // A key runs one change per API key: a second commit of it fails, and its batch with it.
    uniqueIndex("audit_log_idempotency_key_idx")
      .on(t.actorApiKeyId, t.idempotencyKey)
      .where(sql`idempotency_key IS NOT NULL`),
    // The keys the cron clears, oldest first.
    index("audit_log_idempotency_created_idx").on(t.createdAt).where(sql`idempotency_key IS NOT NULL`),
  ],
);

/**
 * The JSON of an entry's `changes` too large for the entry's own row, in consecutive parts
 * (src/db/spill.ts), written in the entry's batch and deleted with it.
 */
export const auditLogParts = sqliteTable(
  "audit_log_parts",
  {
    entryId: text("entry_id").notNull(),
    part: integer("part").notNull(),
    chunk: text("chunk").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.entryId, t.part] }),
    foreignKey({ columns: [t.entryId], foreignColumns: [auditLog.id] }).onDelete("cascade"),
  ],
);
