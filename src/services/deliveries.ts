/**
 * Delivery bookkeeping. One delivery message: load the delivery with its event and integration
 * (one query), make one attempt (webhooks/deliver.ts, pure of D1), record it, and tell the
 * consumer what to do with the message. The dead-letter half marks a delivery `failed`.
 */

import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../context";
import { deliveryAttempts, events, notificationIntegrations, webhookDeliveries } from "../db/schema";
import { newId } from "../lib/ids";
import { nowIso, toIso } from "../lib/time";
import { attemptDelivery } from "../webhooks/deliver";
import { retryDelaySeconds } from "../webhooks/retry";

export type DeliveryDecision =
  | { action: "ack"; reason: string }
  | { action: "retry"; delaySeconds: number }
  | { action: "dead-letter" };

export async function processDelivery(
  ctx: ServiceContext,
  deliveryId: string,
  queueAttempt: number,
  opts: { timeoutMs?: number } = {},
): Promise<DeliveryDecision> {
  const { db } = ctx;
  const row = await db
    .select({
      status: webhookDeliveries.status,
      eventId: events.id,
      eventType: events.type,
      eventData: events.data,
      eventCreatedAt: events.createdAt,
      integrationType: notificationIntegrations.type,
      url: notificationIntegrations.url,
      signingSecret: notificationIntegrations.signingSecret,
    })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(notificationIntegrations, eq(notificationIntegrations.id, webhookDeliveries.integrationId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
  if (!row) return { action: "ack", reason: "delivery gone (project or integration deleted)" };
  // A redelivered message must not send again what was already received or given up on.
  if (row.status !== "pending") return { action: "ack", reason: `delivery already ${row.status}` };

  const outcome = await attemptDelivery(
    { type: row.integrationType, url: row.url, signingSecret: row.signingSecret },
    { id: row.eventId, type: row.eventType, createdAt: row.eventCreatedAt, data: row.eventData },
    { allowInsecure: ctx.config.allowInsecureWebhooks, ...opts },
  );
  const delay = outcome.ok ? null : retryDelaySeconds(queueAttempt, outcome.retryAfterSeconds);
  // One clock reading, so an attempt's next_attempt_at is exactly its delay after it. Whole
  // milliseconds: the runtime's clock can be fractional, and truncating `now` and `now + delay`
  // separately could then land 1 ms apart.
  const now = Math.floor(Date.now());
  const nextAttemptAt = delay === null ? null : toIso(now + delay * 1000);
  const at = toIso(now);
  // One transaction: the counter moves and the attempt row takes the new count as its number,
  // so two copies of a message racing each other still get distinct attempt numbers.
  await db.batch([
    db
      .update(webhookDeliveries)
      .set({
        attempts: sql`${webhookDeliveries.attempts} + 1`,
        status: outcome.ok ? "succeeded" : "pending",
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        nextAttemptAt,
        updatedAt: at,
      })
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending"))),
    db.insert(deliveryAttempts).values({
      id: newId(),
      deliveryId,
      attempt: sql`(SELECT ${webhookDeliveries.attempts} FROM ${webhookDeliveries} WHERE ${webhookDeliveries.id} = ${deliveryId})`,
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
      nextAttemptAt,
      createdAt: at,
    }),
  ]);
  if (outcome.ok) return { action: "ack", reason: "delivered" };
  return delay === null ? { action: "dead-letter" } : { action: "retry", delaySeconds: delay };
}

/** The dead-letter consumer's half: the last try failed, so the delivery is `failed`. */
export async function markDeliveryFailed(ctx: ServiceContext, deliveryId: string): Promise<void> {
  const { db } = ctx;
  await db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, updatedAt: nowIso() })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending")))
    .run();
}
