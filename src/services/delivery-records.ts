/**
 * The delivery record (one per event and integration, with every attempt) and the lists that
 * serve it: an integration's deliveries and an event's deliveries (API_CONTRACT §13). Every
 * page is two queries whatever its size: the deliveries, then all their attempts at once.
 */

import { and, eq, type SQL, sql } from "drizzle-orm";
import type { CallerContext } from "../context";
import type { Db } from "../db/client";
import { keyset, type Page, type PageRequest, toPage } from "../db/pagination";
import { deliveryAttempts, events, webhookDeliveries } from "../db/schema";
import type { DeliveryAttemptRecord, DeliveryRecord } from "../schemas/integration";
import { loadScoped } from "./access";
import { loadIntegration } from "./integrations";

type DeliveryRow = { delivery: typeof webhookDeliveries.$inferSelect; eventType: string };

/** Deliveries matching `scope` (and the page position), joined to their event's type. */
function deliveryRows(db: Db, scope: SQL | undefined, orderBy: SQL[], limit: number) {
  return db
    .select({ delivery: webhookDeliveries, eventType: events.type })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(scope)
    .orderBy(...orderBy)
    .limit(limit)
    .all();
}

/** Every attempt of the given deliveries, grouped by delivery, oldest first. */
async function attemptsOf(db: Db, ids: string[]): Promise<Map<string, DeliveryAttemptRecord[]>> {
  const byDelivery = new Map<string, DeliveryAttemptRecord[]>();
  if (ids.length === 0) return byDelivery;
  const attempts = await db
    .select()
    .from(deliveryAttempts)
    // One JSON parameter instead of one per id: a page (up to 240) would pass D1's 100-parameter limit.
    .where(sql`${deliveryAttempts.deliveryId} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`)
    .orderBy(deliveryAttempts.deliveryId, deliveryAttempts.attempt)
    .all();
  for (const a of attempts) {
    const list = byDelivery.get(a.deliveryId) ?? [];
    list.push({
      attempt: a.attempt,
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      next_attempt_at: a.nextAttemptAt,
      created_at: a.createdAt,
    });
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

async function deliveryPage(db: Db, scope: SQL, page: PageRequest): Promise<Page<DeliveryRecord>> {
  const { where, orderBy } = keyset(
    { createdAt: webhookDeliveries.createdAt, id: webhookDeliveries.id },
    page,
  );
  const rows = await deliveryRows(db, and(scope, where), orderBy, page.limit + 1);
  const attempts = await attemptsOf(
    db,
    rows.slice(0, page.limit).map((r) => r.delivery.id),
  );
  return toPage(
    rows,
    page,
    (r) => ({ createdAt: r.delivery.createdAt, id: r.delivery.id }),
    (r) => toDeliveryRecord(r, attempts),
  );
}

/** One delivery record by id (no access check: the caller has done it). */
export async function deliveryRecord(db: Db, deliveryId: string): Promise<DeliveryRecord | undefined> {
  const [row] = await deliveryRows(db, eq(webhookDeliveries.id, deliveryId), [], 1);
  if (!row) return undefined;
  return toDeliveryRecord(row, await attemptsOf(db, [deliveryId]));
}

/** A page of the integration's deliveries, each with its attempts. */
export async function listDeliveries(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  page: PageRequest,
): Promise<Page<DeliveryRecord>> {
  const { db, identity } = ctx;
  await loadIntegration(db, identity, projectId, integrationId, "read");
  return deliveryPage(db, eq(webhookDeliveries.integrationId, integrationId), page);
}

/** A page of the deliveries of one event (one per integration it reached). Viewer of its project. */
export async function listEventDeliveries(
  ctx: CallerContext,
  eventId: string,
  page: PageRequest,
): Promise<Page<DeliveryRecord>> {
  const { db, identity } = ctx;
  await loadScoped(db, identity, events, eventId, "read", "Event");
  return deliveryPage(db, eq(webhookDeliveries.eventId, eventId), page);
}
