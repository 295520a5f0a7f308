/**
 * What wakes an organization's audit streams (API_CONTRACT §30): every committed audit entry whose
 * organization has an enabled stream. The entry's own INSERT answers which streams are on (in its
 * transaction: src/services/audit/entry.ts), so an entry committed while a stream is on is never
 * missed and an organization without streams costs nothing more. The request never waits: after
 * the commit it wakes each stream's object itself (src/audit-stream/), which sends in order.
 *
 * Not through the EVENTS queue, which it shares with every organization's event fan-outs: one
 * organization's burst of a thousand events put another's wake-ups behind them, and its entries
 * reached its receiver 13–41 s late (§30 asks for 10 s). A wake-up that fails goes on the queue
 * (`audit.streams`), whose consumer wakes the organization's streams; should that fail too, the
 * cron's sweep of streams behind their organization's log wakes them.
 */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { notMoving } from "../../db/moving";
import { auditStreams } from "../../db/schema";
import { loggableError } from "../../errors";
import { toIso } from "../../lib/time";
import { sendToQueue } from "../events/queue";

/**
 * Told the result of an audit INSERT once its batch committed (see the file comment). Every
 * committed entry wakes its streams, none skipped as announced before: a stream may have sent
 * everything up to an earlier entry of the same request by then, and the later one would wait for
 * the sweep. A request writes one entry.
 */
export function announceEntry(ctx: ServiceContext, result: D1Result): void {
  const row = (result.results as { orgId?: string | null; streams?: string | null }[] | undefined)?.[0];
  if (row?.orgId && row.streams) ctx.waitUntil(wakeAnnounced(ctx, row.orgId, row.streams.split(",")));
}

/** Wakes the streams an entry announced; on failure, the queue's consumer does (see the file comment). */
async function wakeAnnounced(
  ctx: ServiceContext,
  orgId: string,
  streamIds: readonly string[],
): Promise<void> {
  try {
    await Promise.all(streamIds.map((id) => wakeStream(ctx, id, orgId)));
    return;
  } catch (err) {
    ctx.log.warn("audit stream wake-up failed; queued", { org_id: orgId, error: loggableError(err) });
  }
  try {
    await sendToQueue(ctx, [{ kind: "audit.streams", org_id: orgId }]);
  } catch (err) {
    // The entries are committed: the cron's sweep of streams behind their organization's log
    // wakes them (src/services/audit/streams-sweep.ts).
    ctx.log.error("audit stream wake-up not queued; left to the sweep", {
      org_id: orgId,
      error: loggableError(err),
    });
  }
}

/** The queue consumer's half: every enabled stream of the organization is woken (its object sends). */
export async function wakeOrgStreams(ctx: ServiceContext, orgId: string): Promise<number> {
  const streams = await ctx.db
    .select({ id: auditStreams.id })
    .from(auditStreams)
    .where(and(eq(auditStreams.orgId, orgId), eq(auditStreams.enabled, true)))
    .all();
  await Promise.all(streams.map(({ id }) => wakeStream(ctx, id, orgId)));
  return streams.length;
}

/**
 * Wakes one stream's object, telling it its organization and the database the stream was found in
 * (the object sends from where the directory says the organization is when it runs).
 */
export function wakeStream(ctx: ServiceContext, streamId: string, orgId: string): Promise<void> {
  const objects = ctx.auditStreams;
  return objects.get(objects.idFromName(streamId)).wake({ streamId, database: ctx.database, orgId });
}

/**
 * The cron's backstop (every 5 minutes, each database): every enabled stream behind its
 * organization's log whose object is not waiting on a retry is woken, so an entry whose wake-up
 * was lost (its queue message, its object's alarm) still goes out. Waking a stream that is already
 * sending is harmless: its object runs one at a time.
 */
export async function wakeLaggingStreams(ctx: ServiceContext, nowMs = Date.now()): Promise<number> {
  const lagging = await ctx.db
    .select({ id: auditStreams.id, orgId: auditStreams.orgId })
    .from(auditStreams)
    .where(
      and(
        eq(auditStreams.enabled, true),
        notMoving(sql.raw("audit_streams.org_id")),
        sql`(${auditStreams.nextAttemptAt} IS NULL OR ${auditStreams.nextAttemptAt} <= ${toIso(nowMs)})`,
        sql`${auditStreams.deliveredThrough} < coalesce((SELECT max(sequence) FROM audit_log WHERE org_id = ${auditStreams.orgId}), 0)`,
      ),
    )
    .all();
  // Each stream's object on its own: one that will not answer keeps no other stream from waking.
  const woken = await Promise.allSettled(lagging.map(({ id, orgId }) => wakeStream(ctx, id, orgId)));
  const failed = woken.flatMap((w) => (w.status === "rejected" ? [w.reason] : []));
  if (failed.length) throw new AggregateError(failed, `${failed.length} lagging audit stream(s) not woken`);
  return lagging.length;
}
