/**
 * The event log (API_CONTRACT §13): every event of a project, kept 30 days, to reconcile from.
 * The record's `data` is exactly the `data` of the webhook body.
 *
 * Retention runs on the daily cron in bounded work: each statement deletes at most
 * RETENTION_BATCH rows (deliveries of old events first, their attempts going with them, then
 * the events themselves) and a run makes at most RETENTION_MAX_STATEMENTS statements, so a
 * project with a million old events costs several runs, never one that times out.
 */

import { and, asc, lt, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { EventType } from "../../db/event-types";
import { projectNotMoving } from "../../db/moving";
import { type Page, type PageFilter, type PageRequest, tablePage } from "../../db/pagination";
import { events, webhookDeliveries } from "../../db/schema";
import { toIso } from "../../lib/time";
import type { EventRecord } from "../../schemas/event";
import { loadAuthorized, projectLookup } from "../access";
import { guardedPage } from "../lookup";

export const EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;
export const RETENTION_BATCH = 1000;
export const RETENTION_MAX_STATEMENTS = 200;

type EventRow = typeof events.$inferSelect;

function toEventRecord(row: EventRow): EventRecord {
  // Only the seven types are ever written (the producers take `EventType`).
  return {
    id: row.id,
    type: row.type as EventType,
    project_id: row.projectId,
    data: row.data,
    created_at: row.createdAt,
  };
}

/** The canonical filter key a cursor is bound to: the type set, sorted and unique. */
export function typeFilterKey(types: readonly EventType[] | undefined): string {
  if (!types?.length) return "";
  return `type=${[...new Set(types)].sort().join(",")}`;
}

export async function listProjectEvents(
  ctx: CallerContext,
  projectId: string,
  types: readonly EventType[] | undefined,
  page: PageRequest,
): Promise<Page<EventRecord>> {
  const { db, identity } = ctx;
  const filters: PageFilter[] = [[events.projectId, projectId]];
  if (types?.length) filters.push([events.type, [...new Set(types)]]);
  return guardedPage(
    db,
    projectLookup(db, identity, projectId, "read"),
    page,
    tablePage(db, events, filters, page),
    toEventRecord,
  );
}

export async function getEvent(ctx: CallerContext, eventId: string): Promise<EventRecord> {
  const { row } = await loadAuthorized(ctx.db, ctx.identity, events, eventId, "read", "Event");
  return toEventRecord(row);
}

export type RetentionResult = { deliveries: number; events: number; statements: number; done: boolean };

/**
 * Deletes events created before `nowMs - 30 days` and their deliveries, oldest first, in bounded
 * batches: take the oldest `batch` old events (an index range), delete their deliveries `batch`
 * at a time (each takes its few attempts with it by cascade), then the events. `done` is false
 * when the run stopped at its statement budget with old rows left; the next run continues.
 */
export async function purgeOldEvents(
  ctx: ServiceContext,
  nowMs = Date.now(),
  limits = { batch: RETENTION_BATCH, maxStatements: RETENTION_MAX_STATEMENTS },
): Promise<RetentionResult> {
  const { db } = ctx;
  const cutoff = toIso(nowMs - EVENT_RETENTION_MS);
  const result: RetentionResult = { deliveries: 0, events: 0, statements: 0, done: false };
  const budgetLeft = () => result.statements < limits.maxStatements;
  while (budgetLeft()) {
    const old = await db
      .select({ id: events.id })
      .from(events)
      // Not a moving organization's (src/db/moving.ts): a fenced one's cannot be deleted here, and
      // would fail the whole batch; its source's are deleted there, captured.
      .where(and(lt(events.createdAt, cutoff), projectNotMoving(sql`${events.projectId}`)))
      .orderBy(asc(events.createdAt), asc(events.id))
      .limit(limits.batch)
      .all();
    result.statements++;
    if (old.length === 0) {
      result.done = true;
      break;
    }
    const ids = sql`(SELECT value FROM json_each(${JSON.stringify(old.map((e) => e.id))}))`;
    let deliveriesLeft = true;
    while (deliveriesLeft && budgetLeft()) {
      // RETURNING, not `meta.changes`: D1 counts the cascaded attempts in `changes` too.
      const deleted = await db
        .delete(webhookDeliveries)
        .where(
          sql`${webhookDeliveries.id} IN (SELECT ${webhookDeliveries.id} FROM ${webhookDeliveries} WHERE ${webhookDeliveries.eventId} IN ${ids} LIMIT ${limits.batch})`,
        )
        .returning({ id: webhookDeliveries.id })
        .all();
      result.statements++;
      result.deliveries += deleted.length;
      deliveriesLeft = deleted.length === limits.batch;
    }
    if (deliveriesLeft || !budgetLeft()) break;
    const gone = await db
      .delete(events)
      .where(sql`${events.id} IN ${ids}`)
      .returning({ id: events.id })
      .all();
    result.statements++;
    result.events += gone.length;
  }
  return result;
}
