/** Stack resources (SPEC.md "Stack resource", API_CONTRACT §3): read by users, written by the engine. */

import { and, eq, type SQL, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../context";
import { insertRow } from "../db/compiled-inserts";
import { type Page, type PageFilter, type PageRequest, tablePage } from "../db/pagination";
import { environments, stackResources, stacks } from "../db/schema";
import { notFound } from "../errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type { StackResourceRecord } from "../schemas/resource";
import type { ResourceCreateInput, ResourceUpdateInput } from "../schemas/resource-writes";
import { authorizedLookup, type LookupExtra, loadAuthorized } from "./access";
import { auditEntry, auditText, auditTextSql, diffRecords } from "./audit/entry";
import { guardedPage, type Lookup } from "./lookup";
import { checkIfMatch, explainMiss, hasIfMatch, unchangedSince } from "./preconditions";

type ResourceRow = typeof stackResources.$inferSelect;

export function toResourceRecord(row: ResourceRow): StackResourceRecord {
  return {
    id: row.id,
    stack_id: row.stackId,
    environment_id: row.environmentId,
    template_id: row.templateId,
    resource_type: row.resourceType,
    physical_id: row.physicalId,
    status: row.status,
    status_reason: row.statusReason,
    timestamp: row.timestamp,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** A resource the caller may read, by ID alone or through its stack or environment (`within`). */
async function loadResource(
  ctx: CallerContext,
  id: string,
  within?: LookupExtra,
): Promise<StackResourceRecord> {
  const { row } = await loadAuthorized(
    ctx.db,
    ctx.identity,
    stackResources,
    id,
    "read",
    "Stack resource",
    within,
  );
  return toResourceRecord(row);
}

export const getResource = (ctx: CallerContext, id: string): Promise<StackResourceRecord> =>
  loadResource(ctx, id);

/** A resource reached through a stack: one of another stack is as absent as a missing one. */
export const getStackResource = (
  ctx: CallerContext,
  stackId: string,
  id: string,
): Promise<StackResourceRecord> => loadResource(ctx, id, [stackResources.stackId, stackId]);

/** A resource reached through an environment: one of another environment is as absent as a missing one. */
export const getEnvironmentResource = (
  ctx: CallerContext,
  environmentId: string,
  id: string,
): Promise<StackResourceRecord> => loadResource(ctx, id, [stackResources.environmentId, environmentId]);

/** The stack's lookup (with the access check) and a page of its resources, in one round trip. */
export function listStackResources(
  ctx: CallerContext,
  stackId: string,
  page: PageRequest,
): Promise<Page<StackResourceRecord>> {
  const { db, identity } = ctx;
  const lookup = authorizedLookup(db, identity, stacks, stackId, "read", "Stack");
  return resourcePage(ctx, lookup, [stackResources.stackId, stackId], page);
}

/** Every stack's resources of an environment, behind the environment's lookup, in one round trip. */
export function listEnvironmentResources(
  ctx: CallerContext,
  environmentId: string,
  page: PageRequest,
): Promise<Page<StackResourceRecord>> {
  const { db, identity } = ctx;
  const lookup = authorizedLookup(db, identity, environments, environmentId, "read", "Environment");
  return resourcePage(ctx, lookup, [stackResources.environmentId, environmentId], page);
}

function resourcePage(
  ctx: CallerContext,
  lookup: Lookup<unknown>,
  filter: PageFilter,
  page: PageRequest,
): Promise<Page<StackResourceRecord>> {
  return guardedPage(
    ctx.db,
    lookup,
    page,
    tablePage(ctx.db, stackResources, [filter], page),
    toResourceRecord,
  );
}

/** The engine's `internalCreateResource`: a new resource of a stack; `template_id` defaults to the stack's. */
export async function createResource(
  ctx: ServiceContext,
  stackId: string,
  input: ResourceCreateInput,
): Promise<StackResourceRecord> {
  const { db } = ctx;
  const stack = await db.select().from(stacks).where(eq(stacks.id, stackId)).get();
  if (!stack) throw notFound("Stack");
  const now = nowIso();
  const row: ResourceRow = {
    id: newId(),
    projectId: stack.projectId,
    environmentId: stack.environmentId,
    stackId,
    templateId: input.template_id ?? stack.templateId,
    resourceType: input.resource_type,
    physicalId: input.physical_id,
    status: input.status,
    statusReason: input.status_reason ?? null,
    timestamp: now,
    createdAt: now,
    updatedAt: now,
  };
  // A stack deleted between the read and the insert: the error boundary answers 404.
  const record = toResourceRecord(row);
  await db.batch([
    insertRow(db, stackResources, row),
    auditEntry(ctx, {
      target: { type: "stack_resource", id: row.id },
      projectId: row.projectId,
      changes: diffRecords(null, record),
    }),
  ]);
  return record;
}

/**
 * The engine's `internalUpdateResource`, a status report. One statement, so the "did the status change" test and the write
 * cannot be split by another report: `timestamp` moves only when the status changes, and a
 * reason left out is kept for the same status and cleared for a new one (a reason describes
 * the status it came with).
 */
export async function updateResource(
  ctx: ServiceContext,
  id: string,
  input: ResourceUpdateInput,
): Promise<StackResourceRecord> {
  const { db } = ctx;
  // `If-Match` (API_CONTRACT §12): compared with the record as read, and the write applies only
  // to that state. Without it the report is one blind batch, as an engine sends it.
  let before: typeof stackResources.$inferSelect | undefined;
  let guard: SQL | undefined;
  if (hasIfMatch(ctx)) {
    before = await db.select().from(stackResources).where(eq(stackResources.id, id)).get();
    if (!before) throw notFound("Stack resource");
    if (await checkIfMatch(ctx, toResourceRecord(before))) guard = unchangedSince(stackResources, before);
  }
  const now = nowIso();
  const changed = sql`${stackResources.status} <> ${input.status}`;
  const current = sql`(SELECT * FROM stack_resources WHERE id = ${id}${guard ? sql` AND ${guard}` : sql``})`;
  // The fields the report sets, `from` as stored: the entry precedes the update to read them,
  // and is written exactly when the update applies (the resource exists).
  const fields = [
    sql`'status', json_object('from', status, 'to', ${input.status})`,
    ...(input.status_reason !== undefined
      ? [
          sql`'status_reason', json_object('from', ${auditTextSql(sql`status_reason`)}, 'to', ${input.status_reason === null ? null : auditText(input.status_reason)})`,
        ]
      : []),
    ...(input.physical_id !== undefined
      ? [
          sql`'physical_id', json_object('from', ${auditTextSql(sql`physical_id`)}, 'to', ${auditText(input.physical_id)})`,
        ]
      : []),
  ];
  const audit = auditEntry(ctx, {
    target: { type: "stack_resource", id },
    projectId: sql`(SELECT project_id FROM ${current})`,
    when: sql`EXISTS ${current}`,
    changes: sql`(SELECT json_object(${sql.join(fields, sql`, `)}) FROM ${current})`,
  });
  const update = db
    .update(stackResources)
    .set({
      status: input.status,
      timestamp: sql`CASE WHEN ${changed} THEN ${now} ELSE ${stackResources.timestamp} END`,
      statusReason:
        input.status_reason !== undefined
          ? input.status_reason
          : sql`CASE WHEN ${changed} THEN NULL ELSE ${stackResources.statusReason} END`,
      ...(input.physical_id !== undefined ? { physicalId: input.physical_id } : {}),
      updatedAt: now,
    })
    .where(and(eq(stackResources.id, id), guard))
    .returning();
  const [, rows] = await db.batch([audit, update]);
  const row = rows[0];
  if (!row) {
    if (before && guard) await explainMiss(db, stackResources, before, "Stack resource");
    throw notFound("Stack resource");
  }
  return toResourceRecord(row);
}
