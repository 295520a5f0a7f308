/**
 * Fan-out: one committed event → one webhook_deliveries row per integration of its project whose
 * flag is on, each handed to its integration's delivery lane (a disabled one gets a `skipped` row,
 * handed to no lane).
 *
 * Idempotent, so a redelivered fan-out message (or the stale-event sweep racing it) does no
 * harm: rows are INSERT OR IGNORE on the unique (event, integration) index, a lane takes a
 * delivery it already holds only once, and an event whose `enqueued_at` is set has already had
 * its deliveries taken by their lanes. The mark is written only after every lane took its
 * deliveries, so a crash in between hands them over again rather than losing them (at least
 * once; receivers deduplicate on `webhook-id`).
 */

import { and, asc, eq, isNull, lt, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { EVENT_FLAG } from "../../db/event-types";
import { events, notificationIntegrations, webhookDeliveries } from "../../db/schema";
import { loggableError } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import { entryOf, scheduleByIntegration } from "../integrations/lanes";

/** D1 binds at most 100 parameters per statement; a delivery row binds 11. */
const ROWS_PER_INSERT = 8;

export type FanoutResult = "missing" | "already-enqueued" | { deliveryIds: string[] };

/**
 * Each event type's notification flag, as SQL: `'$.' || <this>` is the JSON path of the flag in an
 * integration's configuration (NULL for a type without one: no integration matches).
 */
const FLAG_OF_TYPE = sql`CASE ${events.type} ${sql.raw(
  Object.entries(EVENT_FLAG)
    .map(([type, flag]) => `WHEN '${type}' THEN '${flag}'`)
    .join(" "),
)} END`;

/** One read: the event and every integration of its project whose flag for its type is on. */
export function fanoutReadQuery(db: Db, eventId: string) {
  return db
    .select({
      id: events.id,
      projectId: events.projectId,
      enqueuedAt: events.enqueuedAt,
      integrationId: notificationIntegrations.id,
      enabled: notificationIntegrations.enabled,
    })
    .from(events)
    .leftJoin(
      notificationIntegrations,
      and(
        eq(notificationIntegrations.projectId, events.projectId),
        sql`json_extract(${notificationIntegrations.configuration}, '$.' || ${FLAG_OF_TYPE}) = 1`,
      ),
    )
    .where(eq(events.id, eventId));
}

export async function fanoutEvent(ctx: ServiceContext, eventId: string): Promise<FanoutResult> {
  const { db } = ctx;
  const found = await fanoutReadQuery(db, eventId).all();
  const event = found[0];
  // Deleted with its project: nothing left to deliver.
  if (!event) return "missing";
  if (event.enqueuedAt) return "already-enqueued";
  const integrations = found.flatMap((row) =>
    row.integrationId === null ? [] : [{ id: row.integrationId, enabled: row.enabled === true }],
  );

  const now = nowIso();
  const rows = integrations.map((integration) => ({
    id: newId(),
    projectId: event.projectId,
    eventId: event.id,
    integrationId: integration.id,
    // A disabled integration gets its delivery recorded, not sent: `recoverIntegration` sends it later.
    status: integration.enabled ? ("pending" as const) : ("skipped" as const),
    attempts: 0,
    lastStatusCode: null,
    lastError: null,
    nextAttemptAt: integration.enabled ? now : null,
    createdAt: now,
    updatedAt: now,
  }));
  const pending = db
    .select({
      id: webhookDeliveries.id,
      integrationId: webhookDeliveries.integrationId,
      series: webhookDeliveries.series,
    })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.eventId, event.id), eq(webhookDeliveries.status, "pending")));
  const inserts = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    inserts.push(
      db
        .insert(webhookDeliveries)
        .values(rows.slice(i, i + ROWS_PER_INSERT))
        .onConflictDoNothing({ target: [webhookDeliveries.eventId, webhookDeliveries.integrationId] }),
    );
  }
  // One round trip: the rows (new ones only) and every delivery of the event still to send,
  // including rows a crashed earlier fan-out wrote but never handed over.
  // Drizzle types a batch as a tuple; the inserts are a list of unknown length, so the tuple is
  // asserted, and the last result is the select's.
  const results = await db.batch([...inserts, pending] as [typeof pending]);
  const toSend = results[results.length - 1] as Array<{ id: string; integrationId: string; series: number }>;
  await scheduleByIntegration(
    ctx,
    toSend.map((r) => ({ ...entryOf(r.id, r.series), integrationId: r.integrationId })),
  );
  await db
    .update(events)
    .set({ enqueuedAt: nowIso() })
    .where(and(eq(events.id, event.id), sql`${events.enqueuedAt} IS NULL`))
    .run();
  return { deliveryIds: toSend.map((r) => r.id) };
}

/**
 * Fans out events the producer wrote but never handed to the queue (see `staleEventIds`).
 * Done inline rather than by sending another fan-out message, so an event that keeps failing
 * costs one attempt per sweep instead of a growing pile of messages.
 */
export async function sweepStaleEvents(ctx: ServiceContext, nowMs = Date.now()): Promise<string[]> {
  const swept: string[] = [];
  for (const id of await staleEventIds(ctx.db, nowMs)) {
    try {
      await fanoutEvent(ctx, id);
      swept.push(id);
    } catch (err) {
      ctx.log.error("stale event fan-out failed", { event_id: id, error: loggableError(err) });
    }
  }
  return swept;
}

/** How long an event may wait for its fan-out before the sweep hands it to the queue again. */
export const STALE_EVENT_MS = 60_000;
const SWEEP_LIMIT = 50;

/**
 * Events whose fan-out never completed (`enqueued_at` still NULL a minute after they were
 * written): the producer's publish failed or its isolate died before sending, or the
 * fan-out message is stuck. The cron's sweep calls this every few minutes; it reads the
 * partial index `events_pending_idx`, so a sweep that finds nothing costs one indexed read.
 */
export async function staleEventIds(db: Db, nowMs = Date.now()): Promise<string[]> {
  const rows = await db
    .select({ id: events.id })
    .from(events)
    .where(and(isNull(events.enqueuedAt), lt(events.createdAt, toIso(nowMs - STALE_EVENT_MS))))
    .orderBy(asc(events.createdAt))
    .limit(SWEEP_LIMIT)
    .all();
  return rows.map((r) => r.id);
}
