/**
 * Events (API_CONTRACT §8): written durably to D1 first, then fanned out to the EVENTS queue.
 *
 * Producers (deployment transitions, the internal events endpoint) write the event in the same
 * `db.batch` as the change that causes it (`eventInsert`, or the transition's own conditional
 * insert), so the event exists if and only if the change does, and then hand it to
 * `ctx.events.publishAfterCommit`, which never holds up the caller. An event whose publish
 * is lost is found by `staleEventIds` and fanned out by the cron's sweep (services/fanout.ts).
 */

import { and, asc, isNull, lt } from "drizzle-orm";
import type { ServiceContext } from "../context";
import type { Db } from "../db/client";
import type { EventType, InternalEventType } from "../db/event-types";
import { events } from "../db/schema";
import { newId } from "../lib/ids";
import { nowIso, toIso } from "../lib/time";
import { auditEntry } from "./audit";

export type NewEvent = {
  id: string;
  projectId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: string;
};

/** A new event; `data.project_id` is always the event's project. */
export function newEvent(projectId: string, type: EventType, data: Record<string, unknown>): NewEvent {
  return { id: newId(), projectId, type, data: { ...data, project_id: projectId }, createdAt: nowIso() };
}

/** The insert to include in the producer's batch. */
export function eventInsert(db: Db, event: NewEvent) {
  return db.insert(events).values({
    id: event.id,
    projectId: event.projectId,
    type: event.type,
    data: event.data,
    enqueuedAt: null,
    createdAt: event.createdAt,
  });
}

/**
 * The internal API's producer: the event alone is the change, so writing it is one statement.
 * An unknown project is `not_found` (the foreign key refuses the row, so nothing is written).
 * Once written it is published (one cheap `event.fanout` message) without waiting for delivery.
 */
export async function recordEvent(
  ctx: ServiceContext,
  projectId: string,
  type: InternalEventType,
  data: Record<string, unknown>,
): Promise<NewEvent> {
  const { db } = ctx;
  const event = newEvent(projectId, type, data);
  // A project deleted meanwhile: the error boundary answers 404 (API_CONTRACT §17).
  await db.batch([
    eventInsert(db, event),
    // The event's `data` is the reporter's free-form payload: the entry names only its type.
    auditEntry(ctx, {
      target: { type: "event", id: event.id },
      projectId,
      changes: { type: { from: null, to: type } },
    }),
  ]);
  ctx.events.publishAfterCommit(event.id);
  return event;
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
