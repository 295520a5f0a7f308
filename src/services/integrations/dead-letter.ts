/**
 * A delivery's last try failed (the lane's dead letter, or the dead-letter queue's consumer): the
 * delivery is `failed`, and an integration that has done nothing but fail for 5 days is disabled
 * (`failing`, API_CONTRACT §13). Its run of failures (`failing_since`) is kept by the attempts
 * (./attempts.ts).
 */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { notificationIntegrations, webhookDeliveries } from "../../db/schema";
import { toIso } from "../../lib/time";

/** How long nothing but failures disables an integration, and how many failed deliveries it takes. */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;
export const FAILING_MIN_DELIVERIES = 3;

/**
 * The dead-letter consumer's half: the last try failed, so the delivery is `failed`; and if the
 * integration has done nothing but fail for 5 days (at least 3 failed deliveries), it is disabled.
 */
export async function markDeliveryFailed(
  ctx: ServiceContext,
  deliveryId: string,
  series = 0,
  nowMs = Date.now(),
): Promise<void> {
  const { db } = ctx;
  const now = toIso(nowMs);
  const failed = await db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, updatedAt: now })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.status, "pending"),
        // The last try of an older series says nothing about the current one.
        eq(webhookDeliveries.series, series),
      ),
    )
    .returning({ integrationId: webhookDeliveries.integrationId })
    .get();
  if (failed) await disableIfFailing(ctx, failed.integrationId, nowMs);
}

/** One conditional UPDATE: disables (`failing`) only an enabled integration whose run qualifies. */
export async function disableIfFailing(ctx: ServiceContext, integrationId: string, nowMs: number) {
  const i = notificationIntegrations;
  const d = webhookDeliveries;
  const disabled = await ctx.db
    .update(i)
    .set({ enabled: false, disabledReason: "failing", disabledAt: toIso(nowMs), updatedAt: toIso(nowMs) })
    .where(
      and(
        eq(i.id, integrationId),
        eq(i.enabled, true),
        sql`${i.failingSince} IS NOT NULL`,
        sql`${i.failingSince} <= ${toIso(nowMs - FAILING_DISABLE_MS)}`,
        sql`(SELECT count(*) FROM ${d} WHERE ${d.integrationId} = ${integrationId} AND ${d.status} = 'failed' AND ${d.updatedAt} >= ${i.failingSince}) >= ${FAILING_MIN_DELIVERIES}`,
      ),
    )
    .returning({ id: i.id })
    .get();
  if (disabled) ctx.log.warn("integration failing for 5 days; disabled", { integration_id: integrationId });
  return disabled !== undefined;
}
