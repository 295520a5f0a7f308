/**
 * Events (API_CONTRACT §8): written durably to D1 first, then fanned out to the EVENTS queue.
 *
 * Producers (deployment transitions, the internal events endpoint) put `eventInsert`, the one
 * writer of an event row, into the same `db.batch` as the change that causes it, so the event
 * exists if and only if the change does, and then hand it to `publishAfterCommit` (./queue.ts),
 * which never holds up the caller. An event whose publish is lost is fanned out by the cron's
 * sweep (./fanout.ts).
 */

import { type SQL, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import type { EventType } from "../../db/event-types";
import { events } from "../../db/schema";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { EventCreateInput } from "../../schemas/event-writes";
import { auditEntry } from "../audit/entry";
import { publishAfterCommit } from "./queue";

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

/**
 * The insert of an event row, for the producer's batch. `"if-changed"`: only if the statement
 * just before it in the batch changed exactly one row (`changes() = 1`; a transition's
 * compare-and-set, followed by its audit entry, which inserts one row exactly when the update
 * did), so the event is written exactly when its change is.
 */
export function eventInsert(
  db: Db,
  event: NewEvent,
  /** Or an SQL condition of its own: written only when it holds (a compare-and-set's mark, say). */
  when: "always" | "if-changed" | SQL = "always",
  /** `data` as SQL, for a part only the database knows yet (a new deployment's configuration). */
  data: SQL = sql`${JSON.stringify(event.data)}`,
) {
  const condition =
    when === "always" ? sql`` : when === "if-changed" ? sql` WHERE changes() = 1` : sql` WHERE ${when}`;
  // Columns in the table's order (src/db/webhook-tables.ts `events`); not yet enqueued.
  return db
    .insert(events)
    .select(
      sql`SELECT ${event.id}, ${event.projectId}, ${event.type}, ${data}, NULL, ${event.createdAt}${condition}`,
    );
}

/**
 * The internal API's `internalCreateEvent`: the event alone is the change, so writing it is one
 * statement. An unknown project is `not_found` (the foreign key refuses the row, so nothing is
 * written). Once written it is published (one cheap `event.fanout` message) without waiting for
 * delivery.
 */
export async function createEvent(
  ctx: ServiceContext,
  projectId: string,
  input: EventCreateInput,
): Promise<NewEvent> {
  const { db } = ctx;
  const { type, data } = input;
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
  publishAfterCommit(ctx, event.id);
  return event;
}
