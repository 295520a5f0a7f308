/**
 * Reading the audit log (API_CONTRACT §14): the organization's and a project's lists, and the
 * 400-day retention. Entries are written by `auditEntry` (./entry.ts) and never changed.
 */
import { and, eq, inArray, lt, type SQL, sql } from "drizzle-orm";
import type { CallerContext, Identity, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { bindQuery, tableReader } from "../../db/compiled";
import { keyset, type Page, type PageRequest, toPage } from "../../db/pagination";
import { auditLog } from "../../db/schema";
import { notFound } from "../../errors";
import type { AuditEntryRecord } from "../../schemas/audit";
import { authorizeOrgAdmin, projectLookup, withinKeyProjects } from "../access";
import { guardedPage } from "../lookup";

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

function toAuditEntryRecord(row: typeof auditLog.$inferSelect): AuditEntryRecord {
  return {
    id: row.id,
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

/** One keyset page of entries within `scope`; separate from its execution so its plan can be tested. */
export function auditPageQuery(db: Db, scope: SQL | undefined, filter: AuditFilter, req: PageRequest) {
  const { where, orderBy } = keyset({ createdAt: auditLog.createdAt, id: auditLog.id }, req);
  return db
    .select()
    .from(auditLog)
    .where(
      and(
        scope,
        // One JSON parameter, whatever the number of actions (D1 binds at most 100 per statement).
        filter.actions?.length
          ? sql`${auditLog.action} IN (SELECT value FROM json_each(${JSON.stringify([...new Set(filter.actions)])}))`
          : undefined,
        filter.actorAccountId ? eq(auditLog.actorAccountId, filter.actorAccountId) : undefined,
        filter.projectId ? eq(auditLog.projectId, filter.projectId) : undefined,
        where,
      ),
    )
    .orderBy(...orderBy)
    .limit(req.limit + 1);
}

/**
 * The org list's scope: the organization, within a restricted key's projects. A restricted key is
 * refused the org list (API_CONTRACT §28); the condition stays so that the list itself can never
 * show a key the entries of projects it cannot see.
 */
export function orgAuditScope(identity: Identity, orgId: string): SQL | undefined {
  return and(eq(auditLog.orgId, orgId), withinKeyProjects(identity, auditLog.projectId));
}

async function page(ctx: ServiceContext, scope: SQL | undefined, filter: AuditFilter, req: PageRequest) {
  const rows = await auditPageQuery(ctx.db, scope, filter, req).all();
  return toPage(rows, req, (r) => ({ createdAt: r.createdAt, id: r.id }), toAuditEntryRecord);
}

/** The organization's entries: org `owner`/`admin`, acting org-wide (not a key restricted to projects). */
export async function listOrgAuditLog(
  ctx: CallerContext,
  orgId: string,
  filter: AuditFilter,
  req: PageRequest,
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
  req: PageRequest,
): Promise<Page<AuditEntryRecord>> {
  const { db, identity } = ctx;
  // The project's lookup and the page in one round trip; the page is only used if the lookup passes.
  return guardedPage(
    db,
    projectLookup(db, identity, projectId, "manage"),
    req,
    {
      statement: bindQuery(db, auditPageQuery(db, eq(auditLog.projectId, projectId), filter, req)),
      read: tableReader(auditLog),
    },
    toAuditEntryRecord,
  );
}

/** API_CONTRACT §14: entries are kept 400 days. */
export const AUDIT_RETENTION_DAYS = 400;
/** Rows per delete statement, and statements per cron run: each run's work is bounded. */
const PURGE_CHUNK = 500;
const PURGE_CHUNKS_PER_RUN = 20;

/**
 * Deletes entries older than the retention, oldest first, at most PURGE_CHUNK × PURGE_CHUNKS_PER_RUN
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
            .where(lt(auditLog.createdAt, cutoff))
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
