/**
 * The delivery record (one per event and integration, with every attempt) and the lists that
 * serve it: an integration's deliveries and an event's deliveries (API_CONTRACT §13). Every
 * page is one round trip whatever its size: the lookup that authorizes it, the deliveries, and
 * all their attempts at once.
 */

import { and, eq, getTableColumns, inArray, type SQL, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import type { Db } from "../../db/client";
import { bindQuery, columnCount, tableReader } from "../../db/compiled";
import { keyset, type Page, type PageRequest, toPage } from "../../db/pagination";
import { deliveryAttempts, events, webhookDeliveries } from "../../db/schema";
import type { DeliveryAttemptRecord, DeliveryRecord } from "../../schemas/delivery";
import { authorizedLookup } from "../access";
import { type Lookup, lookupThen } from "../lookup";
import { integrationLookup } from "./integrations";

type DeliveryRow = { delivery: typeof webhookDeliveries.$inferSelect; eventType: string };

const deliverySelection = {
  delivery: webhookDeliveries,
  // Aliased: D1 batch results are objects keyed by column name (`columnValues`).
  eventType: sql<string>`${events.type}`.as("event_type"),
};
const readDelivery = tableReader(webhookDeliveries);
const deliveryColumnCount = columnCount(getTableColumns(webhookDeliveries));
const readDeliveryRow = (values: readonly unknown[]): DeliveryRow => ({
  delivery: readDelivery(values),
  eventType: values[deliveryColumnCount] as string,
});
const readAttempt = tableReader(deliveryAttempts);

/** Deliveries matching `scope` (and the page position), joined to their event's type. */
function deliveryRows(db: Db, scope: SQL | undefined, orderBy: SQL[], limit: number) {
  return db
    .select(deliverySelection)
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(scope)
    .orderBy(...orderBy)
    .limit(limit);
}

function toDeliveryAttemptRecord(row: typeof deliveryAttempts.$inferSelect): DeliveryAttemptRecord {
  return {
    attempt: row.attempt,
    status_code: row.statusCode,
    error: row.error,
    duration_ms: row.durationMs,
    next_attempt_at: row.nextAttemptAt,
    created_at: row.createdAt,
  };
}

/** Attempts, grouped by delivery, in the order given (oldest first within each). */
function groupAttempts(
  attempts: (typeof deliveryAttempts.$inferSelect)[],
): Map<string, DeliveryAttemptRecord[]> {
  const byDelivery = new Map<string, DeliveryAttemptRecord[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.deliveryId) ?? [];
    list.push(toDeliveryAttemptRecord(a));
    byDelivery.set(a.deliveryId, list);
  }
  return byDelivery;
}

function toDeliveryRecord(
  { delivery: d, eventType }: DeliveryRow,
  attempts: Map<string, DeliveryAttemptRecord[]>,
): DeliveryRecord {
  return {
    id: d.id,
    integration_id: d.integrationId,
    event_id: d.eventId,
    event_type: eventType,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    next_attempt_at: d.nextAttemptAt,
    attempt_log: attempts.get(d.id) ?? [],
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

/**
 * A page of deliveries within `scope` (`LIMIT page.limit + 1`), and every attempt of the page's
 * deliveries, selected by the same position, order and limit; separate from their execution so
 * that their plans can be tested.
 */
export function deliveryPageQueries(db: Db, scope: SQL, page: PageRequest) {
  const { where, orderBy } = keyset(
    { createdAt: webhookDeliveries.createdAt, id: webhookDeliveries.id },
    page,
  );
  const inPage = and(scope, where);
  const pageIds = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(inPage)
    .orderBy(...orderBy)
    .limit(page.limit);
  return {
    rows: deliveryRows(db, inPage, orderBy, page.limit + 1),
    attempts: db
      .select()
      .from(deliveryAttempts)
      .where(inArray(deliveryAttempts.deliveryId, pageIds))
      .orderBy(deliveryAttempts.deliveryId, deliveryAttempts.attempt),
  };
}

/**
 * A page of deliveries, each with its attempts, behind the lookup that authorizes it: one round
 * trip whatever the page's size (the lookup, the page, and all its deliveries' attempts).
 */
async function deliveryPage(
  db: Db,
  lookup: Lookup<unknown>,
  scope: SQL,
  page: PageRequest,
): Promise<Page<DeliveryRecord>> {
  const queries = deliveryPageQueries(db, scope, page);
  const {
    results: [rows, attemptRows],
  } = await lookupThen(db, lookup, bindQuery(db, queries.rows), bindQuery(db, queries.attempts));
  const byDelivery = groupAttempts(attemptRows.map((v) => readAttempt(v)));
  return toPage(
    rows.map(readDeliveryRow),
    page,
    (r) => ({ createdAt: r.delivery.createdAt, id: r.delivery.id }),
    (r) => toDeliveryRecord(r, byDelivery),
  );
}

/**
 * The two reads of one delivery's record (its row, its attempts), for a batch: a write reads its
 * answer in the batch that commits it (`deliveryFrom`), so no read after the commit can fail it.
 */
export function deliveryRecordQueries(db: Db, deliveryId: string) {
  return [
    deliveryRows(db, eq(webhookDeliveries.id, deliveryId), [], 1),
    db
      .select()
      .from(deliveryAttempts)
      .where(eq(deliveryAttempts.deliveryId, deliveryId))
      .orderBy(deliveryAttempts.attempt),
  ] as const;
}

type DeliveryRecordRows = [
  Awaited<ReturnType<ReturnType<typeof deliveryRecordQueries>[0]["all"]>>,
  Awaited<ReturnType<ReturnType<typeof deliveryRecordQueries>[1]["all"]>>,
];

/** The record `deliveryRecordQueries` read; undefined when there is no such delivery. */
export function deliveryFrom([rows, attempts]: DeliveryRecordRows): DeliveryRecord | undefined {
  const row = rows[0];
  return row ? toDeliveryRecord(row, groupAttempts(attempts)) : undefined;
}

/** One delivery record by id (no access check: the caller has done it). */
export async function deliveryRecord(db: Db, deliveryId: string): Promise<DeliveryRecord | undefined> {
  const [rows, attempts] = deliveryRecordQueries(db, deliveryId);
  return deliveryFrom(await db.batch([rows, attempts]));
}

/** A page of the integration's deliveries, each with its attempts. */
export async function listIntegrationDeliveries(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  page: PageRequest,
): Promise<Page<DeliveryRecord>> {
  const { db, identity } = ctx;
  return deliveryPage(
    db,
    integrationLookup(db, identity, projectId, integrationId, "read"),
    eq(webhookDeliveries.integrationId, integrationId),
    page,
  );
}

/** A page of the deliveries of one event (one per integration it reached). Viewer of its project. */
export async function listEventDeliveries(
  ctx: CallerContext,
  eventId: string,
  page: PageRequest,
): Promise<Page<DeliveryRecord>> {
  const { db, identity } = ctx;
  return deliveryPage(
    db,
    authorizedLookup(db, identity, events, eventId, "read", "Event"),
    eq(webhookDeliveries.eventId, eventId),
    page,
  );
}
