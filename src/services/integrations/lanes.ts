/**
 * Handing deliveries to their lane. Every notification integration has a lane of its own, a
 * Durable Object that makes its deliveries' attempts and keeps their schedule (src/delivery-lane.ts),
 * so a receiver that hangs holds up its own deliveries and nobody else's (docs/capacity.md,
 * "Tenant isolation"). The fan-out, redeliver, recover and the stuck-delivery sweep all hand
 * deliveries over through `scheduleDeliveries`; the lane keeps each delivery once per series, so
 * handing one over again (a retried fan-out, the sweep) never sends it twice.
 *
 * A series above 0 was started by an operator (redeliver, recover), so it is `manual`: sent even
 * while the integration is disabled. The fan-out's series is 0.
 */
import { and, asc, eq, lt } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { loggableError } from "../../errors";
import { toIso } from "../../lib/time";

/**
 * One delivery for its lane: the series of attempts it is in, whether an operator asked for it,
 * and the D1 bookmark of the write that made its row (the fan-out's), from which its attempt's
 * first read starts on a replica; without one (a sweep's or an operator's hand-over) it reads the
 * primary.
 */
export type LaneEntry = {
  deliveryId: string;
  series: number;
  manual: boolean;
  bookmark?: string | null;
  /** The organization database the delivery is in (src/db/databases.ts); set by `scheduleDeliveries`. */
  database?: string | null;
};

/** At most this many entries per call to a lane (one RPC, one SQLite transaction). */
export const SCHEDULE_CHUNK = 500;

/**
 * Hands `entries`, deliveries of `integrationId` due now, to the integration's lane; returns how
 * many were new to it (an entry it already holds in the same or a newer series is left alone). A
 * failure throws: nothing of the failed call was taken.
 */
export async function scheduleDeliveries(
  ctx: ServiceContext,
  integrationId: string,
  entries: readonly LaneEntry[],
): Promise<number> {
  const lanes = ctx.deliveryLanes;
  const lane = lanes.get(lanes.idFromName(integrationId));
  let added = 0;
  for (let i = 0; i < entries.length; i += SCHEDULE_CHUNK) {
    const chunk = entries.slice(i, i + SCHEDULE_CHUNK).map((entry) => ({ ...entry, database: ctx.database }));
    added += await lane.schedule(chunk);
  }
  return added;
}

/** `entries` grouped by integration, each group handed to its lane, all at once. */
export async function scheduleByIntegration(
  ctx: ServiceContext,
  entries: readonly (LaneEntry & { integrationId: string })[],
): Promise<void> {
  const groups = new Map<string, LaneEntry[]>();
  for (const { integrationId, ...entry } of entries) {
    const group = groups.get(integrationId);
    if (group) group.push(entry);
    else groups.set(integrationId, [entry]);
  }
  await Promise.all(
    [...groups].map(([integrationId, group]) => scheduleDeliveries(ctx, integrationId, group)),
  );
}

/** How it is handed over again: the series it is in, `manual` when an operator started that series. */
export const entryOf = (deliveryId: string, series: number): LaneEntry => ({
  deliveryId,
  series,
  manual: series > 0,
});

/** The integration a delivery belongs to, if the delivery still exists. */
export async function integrationOf(ctx: ServiceContext, deliveryId: string): Promise<string | undefined> {
  const row = await ctx.db
    .select({ integrationId: webhookDeliveries.integrationId })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
  return row?.integrationId;
}

/**
 * How long past its due time a pending delivery may be before the sweep hands it over again. A
 * lane makes an attempt when it falls due, or as soon as one of its MAX_IN_FLIGHT attempts ends
 * (each within the 15 s timeout); one late beyond that is normally in no lane at all.
 */
export const STUCK_DELIVERY_MS = 60_000;
/** Integrations per sweep, and deliveries per integration per sweep (later sweeps go on). */
export const SWEEP_INTEGRATIONS = 100;
export const SWEEP_DELIVERIES = 1000;

export type SweepResult = { integrations: number; handed: number; taken: number };

/**
 * The cron's sweep of deliveries left `pending` past their time (API_CONTRACT §8 "at least once"):
 * a crash between a delivery's commit and its hand-over to its lane, a queue message lost with a
 * local queue, a lane reset. Each integration that has some (a bounded number per run) hands them
 * to its lane again, oldest due first; the lane takes only those it does not hold already, so a
 * delivery that is only late (its lane busy with a slow receiver) is not sent twice. Reads go
 * through the partial index of pending deliveries by integration and due time.
 */
export async function sweepStuckDeliveries(ctx: ServiceContext, nowMs = Date.now()): Promise<SweepResult> {
  const before = toIso(nowMs - STUCK_DELIVERY_MS);
  const integrations = await stuckIntegrationsQuery(ctx.db, before).all();
  const result: SweepResult = { integrations: integrations.length, handed: 0, taken: 0 };
  for (const { id } of integrations) {
    try {
      const rows = await stuckDeliveriesQuery(ctx.db, id, before).all();
      result.handed += rows.length;
      result.taken += await scheduleDeliveries(
        ctx,
        id,
        rows.map((row) => entryOf(row.id, row.series)),
      );
    } catch (err) {
      // The next sweep tries this integration again; the others go on.
      ctx.log.error("stuck deliveries not handed over", { integration_id: id, error: loggableError(err) });
    }
  }
  return result;
}

const stuck = (before: string) =>
  and(eq(webhookDeliveries.status, "pending"), lt(webhookDeliveries.nextAttemptAt, before));

/** Integrations with deliveries pending since before `before` (ISO time), a sweep's worth. */
export function stuckIntegrationsQuery(db: Db, before: string) {
  return db
    .selectDistinct({ id: webhookDeliveries.integrationId })
    .from(webhookDeliveries)
    .where(stuck(before))
    .limit(SWEEP_INTEGRATIONS);
}

/** An integration's deliveries pending since before `before`, oldest due first. */
export function stuckDeliveriesQuery(db: Db, integrationId: string, before: string) {
  const d = webhookDeliveries;
  return db
    .select({ id: d.id, series: d.series })
    .from(d)
    .where(and(eq(d.integrationId, integrationId), stuck(before)))
    .orderBy(asc(d.nextAttemptAt))
    .limit(SWEEP_DELIVERIES);
}
