/**
 * Shared pieces of the webhook tests: the local receiver (test/global-setup-receiver.ts),
 * integrations through the internal API, and events and deliveries written straight to D1 with
 * controlled timestamps (as the producers and the fan-out write them).
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { inject, vi } from "vitest";
import { createDb } from "../../src/db/client";
import { type DeliveryStatus, notificationIntegrations, webhookDeliveries } from "../../src/db/schema";
import { newId } from "../../src/lib/ids";
import type { EventType } from "../../src/schemas/event-types";
import { eventInsert, newEvent } from "../../src/services/events";
import type { ReceivedRequest } from "../global-setup-receiver";
import { internalOk } from "./api";

export const db = createDb(env.DB);
export const receiverOrigin = () => inject("receiverOrigin");

export type CreatedIntegration = { id: string; signing_secret: string; url: string; type: string };

export const hook = (bucket: string, query = "") => `${receiverOrigin()}/hooks/${bucket}${query}`;

export async function received(bucket: string): Promise<ReceivedRequest[]> {
  const res = await fetch(`${receiverOrigin()}/received/${bucket}`);
  return res.json<ReceivedRequest[]>();
}

export function integrate(
  projectId: string,
  url: string,
  configuration: Record<string, boolean>,
  type: "webhook" | "slack" = "webhook",
) {
  return internalOk<CreatedIntegration>("POST", `/projects/${projectId}/notification-integrations`, {
    type,
    url,
    configuration,
  });
}

/** An event as a producer writes it (never published); `ageMs` back-dates it. */
export async function writeEvent(
  projectId: string,
  type: EventType,
  data: Record<string, unknown> = {},
  ageMs = 0,
) {
  const event = newEvent(projectId, type, data);
  if (ageMs) event.createdAt = new Date(Date.now() - ageMs).toISOString();
  await eventInsert(db, event).run();
  return event;
}

/** A delivery row as the fan-out writes it, with the given status and times. */
export async function writeDelivery(
  projectId: string,
  eventId: string,
  integrationId: string,
  fields: { status?: DeliveryStatus; at?: string; attempts?: number } = {},
) {
  const id = newId();
  const at = fields.at ?? new Date().toISOString();
  await db
    .insert(webhookDeliveries)
    .values({
      id,
      projectId,
      eventId,
      integrationId,
      status: fields.status ?? "pending",
      attempts: fields.attempts ?? 0,
      createdAt: at,
      updatedAt: at,
    })
    .run();
  return id;
}

export const deliveryRow = (id: string) =>
  db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
export const deliveriesOfEvent = (eventId: string) =>
  db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId)).all();
export const integrationRow = (id: string) =>
  db.select().from(notificationIntegrations).where(eq(notificationIntegrations.id, id)).get();

export const eventually = (check: () => Promise<void>) =>
  vi.waitFor(check, { timeout: 20_000, interval: 200 });

export const DAY_MS = 24 * 3600 * 1000;
