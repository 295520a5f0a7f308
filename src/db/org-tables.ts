/**
 * What belongs to an organization as a whole (API_CONTRACT part five): its limits and the counts
 * they bound (§29), and its audit log streams (§30). Part of the one schema: src/db/schema.ts
 * re-exports them, and drizzle-kit reads them through it.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "./columns";
import { orgRef } from "./identity-tables";

/**
 * An organization's limits (§29) and the counts of what it holds that only grow by a create: one
 * row per organization, in its organization database, made with the organization (a trigger on
 * `organizations`, so every way a row is written makes it).
 *
 * The `*_used` columns are kept by triggers on the counted tables (migration 0015), in the very
 * statement that inserts or deletes a counted row, so every route (public, internal, a cascade)
 * keeps them exact; a trigger on this table refuses (`RAISE(ABORT, 'limit exceeded: <name>')`) an
 * update that would raise a count past its limit, which aborts the whole batch of the write that
 * caused it: the count and the write are one atomic step (src/services/orgs/limits.ts). API keys
 * and deployments per day are counted where they are inserted (a live key expires by itself; the
 * window slides), over indexes bounded by the limit itself.
 */
export const orgLimits = sqliteTable("org_limits", {
  orgId: orgRef().primaryKey(),
  projectsLimit: integer("projects_limit").notNull().default(100),
  environmentsLimit: integer("environments_limit").notNull().default(1000),
  variablesLimit: integer("variables_limit").notNull().default(20000),
  apiKeysLimit: integer("api_keys_limit").notNull().default(1000),
  integrationsLimit: integer("integrations_limit").notNull().default(200),
  auditStreamsLimit: integer("audit_streams_limit").notNull().default(5),
  deploymentsPerDayLimit: integer("deployments_per_day_limit").notNull().default(2000),
  projectsUsed: integer("projects_used").notNull().default(0),
  environmentsUsed: integer("environments_used").notNull().default(0),
  variablesUsed: integer("variables_used").notNull().default(0),
  integrationsUsed: integer("integrations_used").notNull().default(0),
  auditStreamsUsed: integer("audit_streams_used").notNull().default(0),
});

/**
 * An audit log stream (§30): the organization's entries, in `sequence` order, POSTed as NDJSON
 * batches to `url`, each batch only once the one before it was acknowledged. `delivered_through`
 * is the truth of what the receiver has; the stream's Durable Object (src/audit-stream/) sends
 * what follows it and records each acknowledgement here.
 */
export const auditStreams = sqliteTable(
  "audit_streams",
  {
    id: text("id").primaryKey(),
    orgId: orgRef(),
    name: text("name").notNull(),
    url: text("url").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** `whsec_…`, needed in clear to sign batches. */
    signingSecret: text("signing_secret").notNull(),
    /** The greatest sequence the receiver acknowledged, every smaller one with it. */
    deliveredThrough: integer("delivered_through").notNull(),
    /**
     * Bumped by every change of what to send next (a replay, a pause or resume, a new url): an
     * acknowledgement of a batch sent under an older epoch moves nothing.
     */
    epoch: integer("epoch").notNull().default(0),
    /** Failed attempts of the batch now due (the retry schedule's position); 0 after a success. */
    failures: integer("failures").notNull().default(0),
    /** When the next attempt is due (RFC 3339), or null: as soon as there is something to send. */
    nextAttemptAt: text("next_attempt_at"),
    lastErrorAt: text("last_error_at"),
    lastErrorStatusCode: integer("last_error_status_code"),
    lastErrorMessage: text("last_error_message"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /**
     * The last sequence of the batch whose attempt failed, or null: its retries send that batch
     * again, the same entries under the same `webhook-id` (§30), however many were written since;
     * they go in the batches after it. Null again after a success.
     */
    retryThrough: integer("retry_through"),
  },
  (t) => [index("audit_streams_org_created_idx").on(t.orgId, t.createdAt, t.id)],
);
