/**
 * Fan-out: one committed event → one webhook_deliveries row per integration of its project whose
 * flag is on, each handed to its integration's delivery lane (a disabled one gets a `skipped` row,
 * handed to no lane).
 *
 * One round trip on the primary: the read may run on a replica (the consumer starts it from the
 * bookmark of the event's write: a replica that has the event and every integration it was
 * written for), and the rows, the event's mark (`enqueued_at`) and the read of every delivery of
 * the event still to send are one batch; then the lanes take them.
 *
 * Idempotent, so a redelivered fan-out message (or the stale-event sweep racing it, or a replica
 * that does not show the mark yet) does no harm: rows are INSERT OR IGNORE on the unique (event,
 * integration) index and a lane takes a delivery it already holds only once. Never losing a
 * delivery: the mark commits with the rows, before the hand-over. A fan-out that dies (or whose
 * hand-over fails) after that batch is not acknowledged, so its message comes back, and a retried
 * message (`again`) hands the event's pending deliveries over even though the event is marked;
 * past the queue's retries the stuck-delivery sweep (../integrations/sweep.ts) hands over every
 * delivery left `pending` a minute past its due time. At least once; receivers deduplicate on
 * `webhook-id`.
 */

import { and, asc, eq, isNull, lt, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { EVENT_FLAG } from "../../db/event-types";
import { projectNotMoving } from "../../db/moving";
import { events, notificationIntegrations, webhookDeliveries } from "../../db/schema";
import { loggableError } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import { scheduleByIntegration } from "../integrations/lane-client";
import { entryOf } from "../integrations/lane-protocol";

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

/**
 * `again`: a fan-out tried before (a retried message) hands over the event's pending deliveries
 * even once the event is marked, since that try may have marked it and died before its hand-over.
 */
export async function fanoutEvent(
  ctx: ServiceContext,
  eventId: string,
  opts: { again?: boolean } = {},
): Promise<FanoutResult> {
  const { db } = ctx;
  const found = await fanoutReadQuery(db, eventId).all();
  const event = found[0];
  // Deleted with its project: nothing left to deliver.
  if (!event) return "missing";
  if (event.enqueuedAt && !opts.again) return "already-enqueued";
  const integrations = found.flatMap((row) =>
    row.integrationId === null ? [] : [{ id: row.integrationId, enabled: row.enabled === true }],
  );

  const now = nowIso();
  // Marked: its rows committed with the mark (a try that died before its hand-over); only the
  // hand-over is left. Nothing is written, so an integration made since gets no row.
  const rows = (event.enqueuedAt ? [] : integrations).map((integration) => ({
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
  const mark = db
    .update(events)
    .set({ enqueuedAt: now })
    .where(and(eq(events.id, event.id), sql`${events.enqueuedAt} IS NULL`));
  // One round trip, one transaction: the rows (new ones only), the mark, and every delivery of
  // the event still to send, including rows a crashed earlier fan-out wrote but never handed over.
  // Drizzle types a batch as a tuple; the inserts are a list of unknown length, so the tuple is
  // asserted, and the last result is the select's.
  const writes: Array<(typeof inserts)[number] | typeof mark> = event.enqueuedAt ? [] : [...inserts, mark];
  const results = await db.batch([...writes, pending] as [typeof pending]);
  const toSend = results[results.length - 1] as Array<{ id: string; integrationId: string; series: number }>;
  // A row this batch wrote goes with its bookmark, so its first attempt reads a replica that has
  // it. One written before (a fan-out run again) goes without: its first attempt reads the
  // primary, since its lane may have sent it meanwhile and a replica may not show that yet.
  const bookmark = ctx.session.bookmark();
  const written = new Set(rows.map((r) => r.id));
  await scheduleByIntegration(
    ctx,
    toSend.map((r) => ({
      ...entryOf(r.id, r.series),
      bookmark: written.has(r.id) ? bookmark : null,
      integrationId: r.integrationId,
    })),
  );
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
    .where(
      and(
        isNull(events.enqueuedAt),
        lt(events.createdAt, toIso(nowMs - STALE_EVENT_MS)),
        projectNotMoving(sql.raw("events.project_id")),
      ),
    )
    .orderBy(asc(events.createdAt))
    .limit(SWEEP_LIMIT)
    .all();
  return rows.map((r) => r.id);
}
