/**
 * Deliveries left `pending` past their time, handed back to their lanes by the cron's sweep
 * (src/delivery-lane/: one Durable Object per notification integration makes its deliveries'
 * attempts), and which integration, so which lane, a delivery belongs to.
 */
import { and, asc, eq, gte, lt, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { projectNotMoving } from "../../db/moving";
import { webhookDeliveries } from "../../db/schema";
import { loggableError } from "../../errors";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { scheduleDeliveries } from "./lane-client";
import { entryOf } from "./lane-protocol";

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
export async function sweepStuckDeliveries(
  ctx: ServiceContext,
  nowMs = Date.now(),
  start = newId(),
): Promise<SweepResult> {
  const before = toIso(nowMs - STUCK_DELIVERY_MS);
  // From a random integration on, wrapping around: each integration with stuck deliveries is
  // reached within a few sweeps however many others have some (those of a backlogged tenant are
  // late, not stuck, and in id order would take the same first places at every sweep).
  const from = await stuckIntegrationsQuery(ctx.db, before, { from: start }).all();
  const wrapped =
    from.length < SWEEP_INTEGRATIONS
      ? await stuckIntegrationsQuery(ctx.db, before, {
          below: start,
          limit: SWEEP_INTEGRATIONS - from.length,
        }).all()
      : [];
  const integrations = [...from, ...wrapped];
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

/**
 * Integrations with deliveries pending since before `before` (ISO time), in id order from `from`
 * (or up to `below`), a sweep's worth.
 */
export function stuckIntegrationsQuery(
  db: Db,
  before: string,
  { from, below, limit = SWEEP_INTEGRATIONS }: { from?: string; below?: string; limit?: number } = {},
) {
  const d = webhookDeliveries;
  return db
    .selectDistinct({ id: d.integrationId })
    .from(d)
    .where(
      and(
        stuck(before),
        from === undefined ? undefined : gte(d.integrationId, from),
        below === undefined ? undefined : lt(d.integrationId, below),
      ),
    )
    .orderBy(asc(d.integrationId))
    .limit(limit);
}

/** An integration's deliveries pending since before `before`, oldest due first. */
export function stuckDeliveriesQuery(db: Db, integrationId: string, before: string) {
  const d = webhookDeliveries;
  return (
    db
      .select({ id: d.id, series: d.series })
      .from(d)
      // A moving organization's are left alone (its move tells their lane where they are now); the
      // integrations' query stays on its covering index, so the test is here, per delivery.
      .where(
        and(
          eq(d.integrationId, integrationId),
          stuck(before),
          projectNotMoving(sql.raw("webhook_deliveries.project_id")),
        ),
      )
      .orderBy(asc(d.nextAttemptAt))
      .limit(SWEEP_DELIVERIES)
  );
}
