/**
 * Sending deliveries again (API_CONTRACT §13): one delivery (`redeliverDelivery`), or every
 * failed or skipped delivery of a time range, and every one stuck `pending` past its time
 * (`recoverIntegration`). Both need `contributor` on the project, and neither fetches in the
 * request: they set the deliveries back to `pending` in a new series and hand them to the
 * integration's delivery lane (./lanes.ts; a series of an operator's is sent even while the
 * integration is disabled), which makes the attempts, with the usual retry schedule, under the
 * event's own `webhook-id`.
 *
 * The move to `pending` is the write; the hand-off to the lane follows its commit. A lane that
 * does not take a delivery (reset, unreachable) fails no request: the delivery is `pending` in
 * D1, and the sweep (./sweep.ts) hands it over once it is STUCK_DELIVERY_MS past its time. So a
 * `5xx` never follows a committed move (API_CONTRACT §11: a retry would send it again).
 */
import { and, asc, eq, gte, inArray, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { events, webhookDeliveries } from "../../db/schema";
import { notFound } from "../../errors";
import { nowIso, toIso } from "../../lib/time";
import type { DeliveryRecord } from "../../schemas/delivery";
import type { RecoverInput, RecoverResult } from "../../schemas/integration-writes";
import { auditEntry } from "../audit/entry";
import { contained } from "../contained";
import { writeLatest } from "../preconditions";
import { deliveryFrom, deliveryRecordQueries } from "./deliveries";
import { loadIntegration } from "./integrations";
import { SCHEDULE_CHUNK, scheduleDeliveries } from "./lane-client";
import { entryOf } from "./lane-protocol";
import { STUCK_DELIVERY_MS } from "./sweep";

/** The deliveries `where` selects, back to `pending` in a new series, due now; their new series. */
function requeue(ctx: ServiceContext, where: SQL | undefined) {
  const now = nowIso();
  return ctx.db
    .update(webhookDeliveries)
    .set({
      status: "pending",
      series: sql`${webhookDeliveries.series} + 1`,
      nextAttemptAt: now,
      updatedAt: now,
    })
    .where(where)
    .returning({ id: webhookDeliveries.id, series: webhookDeliveries.series });
}

/** A new series of attempts for one delivery, whatever its status: `202` with the record. */
export async function redeliverDelivery(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  deliveryId: string,
): Promise<DeliveryRecord> {
  const { db } = ctx;
  await loadIntegration(db, ctx.identity, projectId, integrationId, "write");
  const inIntegration = and(
    eq(webhookDeliveries.id, deliveryId),
    eq(webhookDeliveries.integrationId, integrationId),
  );
  const first = await db.select().from(webhookDeliveries).where(inIntegration).get();
  if (!first) throw notFound("Delivery");
  // The delivery moves only in the status it was read in, so that its entry's `from` is the status
  // it left (§14): an attempt that ended in between has it read and moved again.
  const { moved, answer } = await writeLatest(
    db,
    webhookDeliveries,
    first,
    async (row) => {
      const [record, attempts] = deliveryRecordQueries(db, deliveryId);
      // The answer is read in the batch that commits the move.
      const [rows, , recordRows, attemptRows] = await db.batch([
        requeue(ctx, and(inIntegration, eq(webhookDeliveries.status, row.status))),
        auditEntry(ctx, {
          target: { type: "webhook_delivery", id: deliveryId },
          projectId,
          changes: row.status === "pending" ? null : { status: { from: row.status, to: "pending" } },
        }),
        record,
        attempts,
      ]);
      const answer = deliveryFrom([recordRows, attemptRows]);
      return rows[0] && answer ? { moved: rows[0], answer } : undefined;
    },
    { guard: null, what: "Delivery" },
  );
  await handOver(ctx, integrationId, [entryOf(deliveryId, moved.series)]);
  return answer;
}

/** Deliveries moved to `pending` handed to their lane; what it does not take is the sweep's. */
async function handOver(
  ctx: ServiceContext,
  integrationId: string,
  entries: ReturnType<typeof entryOf>[],
): Promise<boolean> {
  const taken = await contained(
    ctx,
    "delivery lane did not take deliveries moved to pending; left to the sweep",
    { integration_id: integrationId, deliveries: entries.length },
    async () => {
      await scheduleDeliveries(ctx, integrationId, entries);
      return true;
    },
  );
  return taken ?? false;
}

/** Deliveries one step of `recoverIntegration` reads, moves and queues (one SELECT and one batch per step). */
export const RECOVER_CHUNK = 1000;

/**
 * Re-queues every `failed` or `skipped` delivery of the integration whose event was created in
 * [since, until] (until defaults to now), oldest deliveries first (API_CONTRACT §13: every one, in
 * one call), and with them every one left `pending` past its time (`isStuck`: in no lane, or its
 * lane long behind). It walks them RECOVER_CHUNK at a time by (event time, event ID); in each step
 * the rows move to `pending` in a new series first (so the lane, which may start at once, sends
 * them), then the lane takes them SCHEDULE_CHUNK at a time; what it did not take stays pending,
 * for the sweep (`handOver`). A step whose D1 work fails fails the call, the steps before staying
 * taken (a retry recovers the rest). One audit entry for the call, in the batch of the first step
 * that moved a delivery.
 */
export async function recoverIntegration(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  input: RecoverInput,
): Promise<RecoverResult> {
  await loadIntegration(ctx.db, ctx.identity, projectId, integrationId, "write");
  const until = input.until ?? nowIso();
  const range = { since: input.since, until, stuckBefore: toIso(Date.now() - STUCK_DELIVERY_MS) };
  let queued = 0;
  let after: { createdAt: string; id: string } | null = null;
  for (;;) {
    const step = await recoverStep(ctx, projectId, integrationId, range, after, queued === 0);
    queued += step.queued;
    if (!step.last) return { queued };
    after = step.last;
  }
}

/**
 * The next RECOVER_CHUNK deliveries of a recover after `after`, walked in the integration's own
 * (created_at, id) index from `since` (a delivery is made after its event): each step reads on
 * from where the last stopped, so the whole walk reads each delivery of the range once.
 */
/** What a recover takes: failed or skipped, or pending since before `stuckBefore` (ISO time). */
const recoverable = (stuckBefore: string) =>
  or(
    inArray(webhookDeliveries.status, ["failed", "skipped"]),
    and(eq(webhookDeliveries.status, "pending"), lt(webhookDeliveries.nextAttemptAt, stuckBefore)),
  );

export type RecoverRange = { since: string; until: string; stuckBefore: string };

export function recoverCandidatesQuery(
  db: Db,
  integrationId: string,
  { since, until, stuckBefore }: RecoverRange,
  after: { createdAt: string; id: string } | null,
) {
  const d = webhookDeliveries;
  return db
    .select({ id: d.id, status: d.status, createdAt: d.createdAt })
    .from(d)
    .innerJoin(events, eq(events.id, d.eventId))
    .where(
      and(
        eq(d.integrationId, integrationId),
        gte(d.createdAt, since),
        after ? sql`(${d.createdAt}, ${d.id}) > (${after.createdAt}, ${after.id})` : undefined,
        recoverable(stuckBefore),
        gte(events.createdAt, since),
        lte(events.createdAt, until),
      ),
    )
    .orderBy(asc(d.createdAt), asc(d.id))
    .limit(RECOVER_CHUNK);
}

/** One step of `recoverIntegration`: the next chunk after `after`; `last` is null once none is left. */
async function recoverStep(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  range: RecoverRange,
  after: { createdAt: string; id: string } | null,
  audit: boolean,
): Promise<{ queued: number; last: { createdAt: string; id: string } | null }> {
  const { db } = ctx;
  const candidates = await recoverCandidatesQuery(db, integrationId, range, after).all();
  const tail = candidates.at(-1);
  if (!tail) return { queued: 0, last: null };
  const last = candidates.length < RECOVER_CHUNK ? null : { createdAt: tail.createdAt, id: tail.id };

  const idsJson = (ids: string[]) => sql`(SELECT value FROM json_each(${JSON.stringify(ids)}))`;
  // Only rows still recoverable move: a concurrent recover or redeliver takes each once.
  const move = requeue(
    ctx,
    and(
      sql`${webhookDeliveries.id} IN ${idsJson(candidates.map((c) => c.id))}`,
      recoverable(range.stuckBefore),
    ),
  );
  const entry = auditEntry(ctx, {
    target: { type: "notification_integration", id: integrationId },
    projectId,
    changes: null,
  });
  const [moved] = audit ? await db.batch([move, entry]) : [await move.all()];
  const seriesOf = new Map(moved.map((m) => [m.id, m.series]));
  const toSend = candidates.flatMap((c) => {
    const series = seriesOf.get(c.id);
    return series === undefined ? [] : [{ ...c, series }];
  });
  for (let i = 0; i < toSend.length; i += SCHEDULE_CHUNK) {
    const chunk = toSend.slice(i, i + SCHEDULE_CHUNK).map((c) => entryOf(c.id, c.series));
    // A lane that refused a chunk is down: the rest are the sweep's too.
    if (!(await handOver(ctx, integrationId, chunk))) break;
  }
  return { queued: toSend.length, last };
}
