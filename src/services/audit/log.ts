/**
 * Reading the audit log (API_CONTRACT §14): the organization's and a project's lists, and the
 * 400-day retention. Entries are written by `auditEntry` (./entry.ts) and never changed.
 */
import { and, asc, eq, gt, inArray, lt, type SQL, sql } from "drizzle-orm";
import type { CallerContext, Identity, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { tableReader } from "../../db/compiled";
import { notMoving } from "../../db/moving";
import {
  keyset,
  type ListParams,
  type NumberedPageRequest,
  numberedPageRequest,
  type Page,
  type PageRequest,
  pageRequest,
  toNumberedPage,
  toPage,
} from "../../db/pagination";
import { auditLog } from "../../db/schema";
import { withSpilledChanges } from "../../db/spill";
import { wasCut, weightedPage } from "../../db/weighted-page";
import { notFound } from "../../errors";
import type { AuditEntryRecord } from "../../schemas/audit";
import { authorizeOrgAdmin, projectLookup, withinKeyProjects } from "../access";
import { lookupThen } from "../lookup";

export type AuditFilter = {
  actions?: readonly string[] | undefined;
  actorAccountId?: string | undefined;
  projectId?: string | undefined;
};

/** The filter a cursor is bound to (API_CONTRACT §4): actions compared as a set. */
export function auditFilterKey(filter: AuditFilter): string {
  const parts: string[] = [];
  if (filter.actions?.length) parts.push(`action=${[...new Set(filter.actions)].sort().join(",")}`);
  if (filter.actorAccountId) parts.push(`actor_account_id=${filter.actorAccountId}`);
  if (filter.projectId) parts.push(`project_id=${filter.projectId}`);
  return parts.join("&");
}

/** The entry as the audit log API serves it, and as an audit stream sends it (one NDJSON line each). */
export function toAuditEntryRecord(row: typeof auditLog.$inferSelect): AuditEntryRecord {
  return {
    id: row.id,
    // Null only for an entry of no organization, which no list shows and no stream sends.
    sequence: row.sequence ?? 0,
    org_id: row.orgId,
    project_id: row.projectId,
    action: row.action,
    target: { type: row.targetType, id: row.targetId },
    actor: { type: row.actorType, account_id: row.actorAccountId, api_key_id: row.actorApiKeyId },
    request_id: row.requestId,
    ip: row.ip,
    user_agent: row.userAgent,
    changes: row.changes,
    created_at: row.createdAt,
  };
}

/** How a list of entries pages: by time (§14, §4) or, with `after_sequence`, by sequence (§30). */
export type AuditPageRequest = { byTime: PageRequest } | { bySequence: NumberedPageRequest };

/**
 * The page request of a list's query: `after_sequence` pages by sequence, ascending, from it (or
 * from a cursor of such a page, which is later); else the §4 rules. The cursor is bound to the
 * order and filter, so one of a sequence page is refused by a list without `after_sequence`.
 */
export function auditPageRequest(
  query: ListParams & { after_sequence?: number | undefined },
  filter: AuditFilter,
): AuditPageRequest {
  const key = auditFilterKey(filter);
  if (query.after_sequence === undefined) return { byTime: pageRequest(query, key) };
  const numbered = numberedPageRequest({ ...query, sort_by: "+created_at" }, `sequence:${key}`);
  return { bySequence: { ...numbered, after: Math.max(query.after_sequence, numbered.after ?? 0) } };
}

const filterConditions = (filter: AuditFilter) => [
  // One JSON parameter, whatever the number of actions (D1 binds at most 100 per statement).
  filter.actions?.length
    ? sql`${auditLog.action} IN (SELECT value FROM json_each(${JSON.stringify([...new Set(filter.actions)])}))`
    : undefined,
  filter.actorAccountId ? eq(auditLog.actorAccountId, filter.actorAccountId) : undefined,
  filter.projectId ? eq(auditLog.projectId, filter.projectId) : undefined,
];

/** One page of entries within `scope`; separate from its execution so its plan can be tested. */
export function auditPageQuery(db: Db, scope: SQL | undefined, filter: AuditFilter, req: AuditPageRequest) {
  if ("bySequence" in req) {
    return db
      .select()
      .from(auditLog)
      .where(and(scope, ...filterConditions(filter), gt(auditLog.sequence, req.bySequence.after ?? 0)))
      .orderBy(asc(auditLog.sequence))
      .limit(req.bySequence.limit + 1);
  }
  const { where, orderBy } = keyset({ createdAt: auditLog.createdAt, id: auditLog.id }, req.byTime);
  return db
    .select()
    .from(auditLog)
    .where(and(scope, ...filterConditions(filter), where))
    .orderBy(...orderBy)
    .limit(req.byTime.limit + 1);
}

/**
 * The most bytes of entries' `changes` and other free text a page reads, but its first entry: an
 * entry lists every name an export or a replace touched (§18; up to ~2 MB), and an isolate's 128 MB
 * are every request's it runs. A page that reaches it holds fewer than `limit` entries, with
 * `has_more` and a cursor after its last (§4: no record is repeated or skipped).
 */
export const AUDIT_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * An entry's weight in a page or a stream's batch (./stream-delivery.ts): its free text (its
 * `changes` in parts too), and 1 KiB.
 */
export const ENTRY_WEIGHT =
  "length(coalesce(changes, '')) + coalesce(changes_spilled, 0) + length(coalesce(user_agent, '')) + 1024";

type EntryRow = typeof auditLog.$inferSelect;

/** `rows` with the `changes` of each entry too large for its row read back from its parts. */
export const withEntryParts = (db: Db, rows: EntryRow[]): Promise<EntryRow[]> =>
  withSpilledChanges(
    rows,
    (row) => row.id,
    (ids) =>
      db.$client
        .prepare(
          "SELECT entry_id AS owner, part, chunk FROM audit_log_parts WHERE entry_id IN (SELECT value FROM json_each(?1))",
        )
        .bind(JSON.stringify(ids)),
  );

/**
 * `auditPageQuery`'s page cut where its entries' weight passes AUDIT_PAGE_BYTES (never before its
 * first), in the same order; each row is the entry's columns in the table's order (as `select()`
 * lists them), then its running weight, its place, and how many rows the page held before the cut.
 */
export function auditPageStatement(
  db: Db,
  scope: SQL | undefined,
  filter: AuditFilter,
  req: AuditPageRequest,
): D1PreparedStatement {
  const order =
    "bySequence" in req
      ? "sequence"
      : req.byTime.direction === "asc"
        ? "created_at, id"
        : "created_at DESC, id DESC";
  return weightedPage(
    db,
    auditPageQuery(db, scope, filter, req).toSQL(),
    order,
    ENTRY_WEIGHT,
    AUDIT_PAGE_BYTES,
  );
}

const readEntry = tableReader(auditLog);

/** Rows of `auditPageStatement` → the envelope, its cursor of the page's own kind. */
async function toAuditPage(
  db: Db,
  rows: unknown[][],
  req: AuditPageRequest,
): Promise<Page<AuditEntryRecord>> {
  const entries = await withEntryParts(
    db,
    rows.map((values) => readEntry(values)),
  );
  const cut = wasCut(rows);
  if ("bySequence" in req)
    return toNumberedPage(entries, req.bySequence, (r) => r.sequence ?? 0, toAuditEntryRecord, cut);
  return toPage(entries, req.byTime, (r) => ({ createdAt: r.createdAt, id: r.id }), toAuditEntryRecord, cut);
}

/**
 * The org list's scope: the organization, within a restricted key's projects. A restricted key is
 * refused the org list (API_CONTRACT §28); the condition stays so that the list itself can never
 * show a key the entries of projects it cannot see.
 */
export function orgAuditScope(identity: Identity, orgId: string): SQL | undefined {
  return and(eq(auditLog.orgId, orgId), withinKeyProjects(identity, auditLog.projectId));
}

async function page(ctx: ServiceContext, scope: SQL | undefined, filter: AuditFilter, req: AuditPageRequest) {
  return toAuditPage(ctx.db, await auditPageStatement(ctx.db, scope, filter, req).raw(), req);
}

/** The organization's entries: org `owner`/`admin`, acting org-wide (not a key restricted to projects). */
export async function listOrgAuditLog(
  ctx: CallerContext,
  orgId: string,
  filter: AuditFilter,
  req: AuditPageRequest,
): Promise<Page<AuditEntryRecord>> {
  const { identity } = ctx;
  if (orgId !== identity.orgId) throw notFound("Organization");
  authorizeOrgAdmin(identity, "The organization's audit log");
  return page(ctx, orgAuditScope(identity, orgId), filter, req);
}

/** The project's entries: project `owner` (org owners and admins act as one). */
export async function listProjectAuditLog(
  ctx: CallerContext,
  projectId: string,
  filter: AuditFilter,
  req: AuditPageRequest,
): Promise<Page<AuditEntryRecord>> {
  const { db, identity } = ctx;
  // The project's lookup and the page in one round trip; the page is only used if the lookup passes.
  const {
    results: [rows],
  } = await lookupThen(
    db,
    projectLookup(db, identity, projectId, "manage"),
    auditPageStatement(db, eq(auditLog.projectId, projectId), filter, req),
  );
  return toAuditPage(db, rows, req);
}

/** API_CONTRACT §14: entries are kept 400 days. */
export const AUDIT_RETENTION_DAYS = 400;
/** Rows per delete statement, and statements per cron run: each run's work is bounded. */
const PURGE_CHUNK = 500;
const PURGE_CHUNKS_PER_RUN = 20;

/**
 * Deletes entries older than the retention (but each organization's newest, and any of its streams
 * still owes), oldest first, at most PURGE_CHUNK × PURGE_CHUNKS_PER_RUN
 * per run (the daily cron): a backlog drains over several days instead of one long run.
 * Returns how many entries it removed.
 */
export async function purgeExpiredAuditEntries(ctx: ServiceContext, nowMs = Date.now()): Promise<number> {
  const cutoff = new Date(nowMs - AUDIT_RETENTION_DAYS * 86_400_000).toISOString();
  let removed = 0;
  for (let i = 0; i < PURGE_CHUNKS_PER_RUN; i++) {
    const result = await ctx.db
      .delete(auditLog)
      .where(
        inArray(
          auditLog.id,
          ctx.db
            .select({ id: auditLog.id })
            .from(auditLog)
            // An organization's newest entry stays whatever its age: the next one's sequence is
            // counted from it (§30), and must never repeat a number a receiver already holds. An
            // entry one of its streams has not had acknowledged stays too (a paused stream, a
            // receiver failing for longer than the retention): §30 delivers each entry, never
            // skipped, and its entries wait; it goes once acknowledged, or with its stream.
            .where(
              and(
                lt(auditLog.createdAt, cutoff),
                sql`(${auditLog.orgId} IS NULL OR ${auditLog.sequence} < (SELECT max(newest.sequence) FROM audit_log AS newest WHERE newest.org_id = ${auditLog.orgId}))`,
                sql`NOT EXISTS (SELECT 1 FROM audit_streams AS owing WHERE owing.org_id = ${auditLog.orgId} AND owing.delivered_through < ${auditLog.sequence})`,
                // Nor a moving organization's (src/db/moving.ts): its source purges them, captured.
                notMoving(sql`${auditLog.orgId}`),
              ),
            )
            .orderBy(auditLog.createdAt)
            .limit(PURGE_CHUNK),
        ),
      )
      .run();
    const changed = result.meta.changes ?? 0;
    removed += changed;
    if (changed < PURGE_CHUNK) break;
  }
  return removed;
}
