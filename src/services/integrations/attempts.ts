/**
 * Delivery attempts, the delivery lane's half (src/delivery-lane/object.ts). One attempt: load the
 * delivery with its event and integration (one query), make the request (webhooks/deliver.ts, pure
 * of D1), record it, and tell the lane when to try again. The dead-letter half marks a delivery
 * `failed` (./dead-letter.ts).
 *
 * Automatic disabling (API_CONTRACT §13) is decided where attempts end:
 * - a `410 Gone` answer disables the integration at once (`gone`) and ends the delivery as `failed`;
 * - every failed attempt starts (if none is running) a run of failures, `failing_since`, which any
 *   successful attempt or a re-enable ends; when a delivery is marked `failed` and the run is at
 *   least 5 days old with at least 3 failed deliveries inside it, the integration is disabled
 *   (`failing`, ./dead-letter.ts).
 * A delivery of a disabled integration is not sent: it becomes `skipped`, for `recoverIntegration` to send later
 * (a series an operator asked for, `manual`, is sent anyway).
 */

import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { keyedSelection } from "../../db/keyed-select";
import {
  deliveryAttempts,
  events,
  movingOrgs,
  notificationIntegrations,
  projects,
  webhookDeliveries,
} from "../../db/schema";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import { attemptDelivery } from "../../webhooks/deliver";
import { retryDelaySeconds } from "../../webhooks/retry";
import { type OutcomeWrite, type Recorder, recordAlone } from "./outcomes";
import { signingSecretsOf } from "./secrets";

/**
 * What became of an attempt: done with (`ack`), due again `delaySeconds` later, at `at` (ms: the
 * instant the delivery record names as its `next_attempt_at`), or out of tries.
 */
export type DeliveryDecision =
  | { action: "ack"; reason: string }
  /** `bookmark`: of the session that recorded the outcome, where the retry's first read starts. */
  | { action: "retry"; delaySeconds: number; at: number; bookmark?: string | null }
  | { action: "dead-letter" }
  /**
   * Not attempted here: its organization switched to the database `to` (API_CONTRACT §32), whose
   * copy of the delivery is the one to send and record. Tried there at once, no attempt counted.
   */
  | { action: "moved"; to: string }
  /** Not attempted: its organization is being moved, here or away (fenced). Tried again in a moment. */
  | { action: "held" }
  /**
   * Not attempted: the integration is disabled, so the delivery is now `skipped`. The lane skips
   * the rest of what is due together (`skipDisabled`) rather than one attempt each.
   */
  | { action: "skipped" };

/**
 * Attempt `attempt` (1 for the first) of the delivery's series `series`: the lane's (src/delivery-lane/object.ts),
 * which keeps the count of a series' attempts and acts on the decision.
 */
export async function processDelivery(
  ctx: ServiceContext,
  deliveryId: string,
  attempt: number,
  opts: { timeoutMs?: number; manual?: boolean; series?: number; record?: Recorder } = {},
): Promise<DeliveryDecision> {
  const { manual = false, series = 0, record = recordAlone, ...attemptOpts } = opts;
  const { db } = ctx;
  const row = await db
    .select({
      status: webhookDeliveries.status,
      series: webhookDeliveries.series,
      eventId: events.id,
      eventType: events.type,
      eventData: events.data,
      eventCreatedAt: events.createdAt,
      integrationId: notificationIntegrations.id,
      integrationType: notificationIntegrations.type,
      enabled: notificationIntegrations.enabled,
      url: notificationIntegrations.url,
      integrationUpdatedAt: notificationIntegrations.updatedAt,
      signingSecret: notificationIntegrations.signingSecret,
      previousSecret: notificationIntegrations.previousSigningSecret,
      previousExpiresAt: notificationIntegrations.previousSecretExpiresAt,
      moveTo: movingOrgs.toDatabase,
      moveSwitched: movingOrgs.switched,
      moveFenced: movingOrgs.fenced,
      moveIncoming: movingOrgs.incoming,
    })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(notificationIntegrations, eq(notificationIntegrations.id, webhookDeliveries.integrationId))
    .innerJoin(projects, eq(projects.id, notificationIntegrations.projectId))
    .leftJoin(movingOrgs, eq(movingOrgs.orgId, projects.orgId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
  if (!row) return { action: "ack", reason: "delivery gone (project or integration deleted)" };
  // The lane was handed this database just before its organization's move switched (a hand-over
  // that arrived after the switch told the lane the new one): what is here is a copy the fence
  // keeps from changing. Sent from here, its outcome could not be recorded, and the receiver would
  // get it again from the new database; while the fence holds, nothing is sent at all.
  if (row.moveSwitched && row.moveTo) return { action: "moved", to: row.moveTo };
  if (row.moveFenced || row.moveIncoming) return { action: "held" };
  // A redeliver or recover started a newer series; this attempt's series is over.
  if (row.series !== series) return { action: "ack", reason: "superseded by a newer series" };
  // A delivery handed over again must not send again what was already received or given up on.
  if (row.status !== "pending") return { action: "ack", reason: `delivery already ${row.status}` };
  const current = and(
    eq(webhookDeliveries.id, deliveryId),
    eq(webhookDeliveries.status, "pending"),
    eq(webhookDeliveries.series, series),
  );
  if (!row.enabled && !manual) {
    await db
      .update(webhookDeliveries)
      .set({ status: "skipped", nextAttemptAt: null, updatedAt: nowIso() })
      .where(current)
      .run();
    return { action: "skipped" };
  }

  const started = Date.now();
  const outcome = await attemptDelivery(
    {
      type: row.integrationType,
      url: row.url,
      signingSecrets: await signingSecretsOf(
        ctx,
        row.integrationId,
        {
          current: row.signingSecret,
          previous: row.previousSecret,
          previousExpiresAt: row.previousExpiresAt,
        },
        started,
      ),
    },
    { id: row.eventId, type: row.eventType, createdAt: row.eventCreatedAt, data: row.eventData },
    { allowInsecure: ctx.config.allowInsecureWebhooks, ...attemptOpts },
  );
  const gone = outcome.statusCode === 410;
  const delay = outcome.ok || gone ? null : retryDelaySeconds(attempt, outcome.retryAfterSeconds);
  // One clock reading, so an attempt's next_attempt_at is exactly its delay after it. Whole
  // milliseconds: the runtime's clock can be fractional, and truncating `now` and `now + delay`
  // separately could then land 1 ms apart.
  const now = Math.floor(Date.now());
  const nextAttemptAt = delay === null ? null : toIso(now + delay * 1000);
  const at = toIso(now);
  const integration = notificationIntegrations;
  // One transaction: the counter moves and the attempt row takes the new count as its number,
  // so two attempts of one delivery racing each other still get distinct attempt numbers; the
  // integration's run of failures (and a 410's disabling) moves with them. Built on whichever
  // session records it: a lane group-commits the outcomes that end together (src/delivery-lane/group-commit.ts).
  const write: OutcomeWrite = (db) => [
    db
      .update(webhookDeliveries)
      .set({
        attempts: sql`${webhookDeliveries.attempts} + 1`,
        status: outcome.ok ? "succeeded" : gone ? "failed" : "pending",
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        nextAttemptAt,
        updatedAt: at,
      })
      .where(current),
    // Only when the UPDATE moved the delivery (`changes() = 1`): one deleted meanwhile (its
    // project or integration gone) or moved on by a newer series records no attempt. The
    // integration's state below still moves: the request did go out, and its answer (a 410
    // included) says how the receiver is doing.
    db.insert(deliveryAttempts).select(
      db
        .select(
          // Every column by name, aliased as itself, in the table's order (src/db/keyed-select.ts).
          keyedSelection(deliveryAttempts, {
            id: newId(),
            deliveryId: webhookDeliveries.id,
            attempt: webhookDeliveries.attempts,
            statusCode: outcome.statusCode,
            error: outcome.error,
            durationMs: outcome.durationMs,
            nextAttemptAt,
            createdAt: at,
          }),
        )
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.id, deliveryId), sql`changes() = 1`)),
    ),
    outcome.ok
      ? db
          .update(integration)
          .set({ failingSince: null })
          .where(and(eq(integration.id, row.integrationId), sql`${integration.failingSince} IS NOT NULL`))
      : db
          .update(integration)
          .set({
            failingSince: sql`COALESCE(${integration.failingSince}, ${at})`,
            ...(gone
              ? {
                  enabled: false,
                  disabledReason: sql`CASE WHEN ${integration.enabled} THEN 'gone' ELSE ${integration.disabledReason} END`,
                  disabledAt: sql`CASE WHEN ${integration.enabled} THEN ${at} ELSE ${integration.disabledAt} END`,
                  // The record changed (enabled, reason, time): so did its update time.
                  updatedAt: sql`CASE WHEN ${integration.enabled} THEN ${at} ELSE ${integration.updatedAt} END`,
                }
              : {}),
          })
          .where(
            and(
              eq(integration.id, row.integrationId),
              // A 410 disables the integration only as the attempt found it: not one sent elsewhere
              // or re-enabled meanwhile (the url it answers for is no longer, or again, its receiver).
              gone
                ? and(eq(integration.url, row.url), eq(integration.updatedAt, row.integrationUpdatedAt))
                : sql`${integration.failingSince} IS NULL`,
            ),
          ),
  ];
  const { results, bookmark } = await record(ctx, write);
  if (results[0]?.meta.changes === 0)
    return { action: "ack", reason: "delivery gone or superseded meanwhile" };
  if (outcome.ok) return { action: "ack", reason: "delivered" };
  if (gone) {
    const disabled = results[2]?.meta.changes !== 0;
    const reason = `receiver gone (410): integration ${disabled ? "disabled" : "changed meanwhile, left as it is"}`;
    ctx.log.warn(reason, { integration_id: row.integrationId });
    return { action: "ack", reason };
  }
  return delay === null
    ? { action: "dead-letter" }
    : { action: "retry", delaySeconds: delay, at: now + delay * 1000, bookmark };
}

/** How many deliveries one `skipDisabled` statement skips at most. */
export const SKIP_CHUNK = 100;

/**
 * A disabled integration's due deliveries, skipped together: one statement for up to SKIP_CHUNK of
 * them (their IDs and series in one JSON parameter), where an attempt each is two round trips each.
 * A lane calls it once an attempt found its integration disabled (`{ action: "skipped" }`): a
 * backlog of thousands, skipped one attempt at a time with nothing between them, kept the primary
 * busy long enough to delay every other organization on it by tens of seconds.
 *
 * It skips only what `processDelivery` would: a delivery still `pending` in the entry's series, of
 * an integration that is still disabled, whose organization no move touches. The IDs it skipped
 * are returned; any other entry goes through its own attempt, which decides as always (sent after a
 * re-enable, superseded, held or moved by a move). Entries an operator asked for (`manual`) are
 * sent even while the integration is disabled, so the caller never passes them.
 */
export async function skipDisabled(
  ctx: ServiceContext,
  entries: readonly { deliveryId: string; series: number }[],
): Promise<string[]> {
  if (entries.length === 0) return [];
  if (entries.length > SKIP_CHUNK) throw new RangeError(`at most ${SKIP_CHUNK} deliveries per statement`);
  const d = webhookDeliveries;
  const named = JSON.stringify(entries.map((entry) => [entry.deliveryId, entry.series]));
  const skipped = await ctx.db
    .update(d)
    .set({ status: "skipped", nextAttemptAt: null, updatedAt: nowIso() })
    .where(
      and(
        sql`(${d.id}, ${d.series}) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${named}))`,
        eq(d.status, "pending"),
        sql`EXISTS (SELECT 1 FROM notification_integrations i WHERE i.id = webhook_deliveries.integration_id AND i.enabled = 0)`,
        sql`NOT EXISTS (SELECT 1 FROM projects p JOIN moving_orgs m ON m.org_id = p.org_id WHERE p.id = webhook_deliveries.project_id)`,
      ),
    )
    .returning({ id: d.id })
    .all();
  return skipped.map(({ id }) => id);
}
