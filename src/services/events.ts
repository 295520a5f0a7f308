/**
 * Events (API_CONTRACT §8): written durably to D1 first, then fanned out to the EVENTS queue.
 *
 * Producers (deployment transitions, the internal events endpoint) put `eventInsert(db, event)`
 * in the same `db.batch` as the change that causes the event, so the event exists if and only
 * if the change does, and then call `publishEvent` without awaiting delivery.
 */
import type { Db } from "../db/client";
import { events } from "../db/schema";
import { newId } from "../http/ids";
import { nowIso } from "../http/time";
import type { EventFanoutMessage } from "../queue/messages";

export const EVENT_TYPES = [
  "deployment.in_progress",
  "deployment.succeeded",
  "deployment.failed",
  "changelog.created",
  "promotion.created",
  "service.in_alarm",
  "service.ok",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
 * Hands a committed event to the queue: one cheap message, which the consumer fans out into
 * one delivery message per integration whose flag is on. Call it without awaiting delivery
 * (`executionCtx.waitUntil`).
 */
export async function publishEvent(queue: Queue, eventId: string): Promise<void> {
  const message: EventFanoutMessage = { kind: "event.fanout", event_id: eventId };
  await queue.send(message, { contentType: "json" });
}
