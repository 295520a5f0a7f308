/**
 * What wakes an organization's audit streams (API_CONTRACT §30): every committed audit entry whose
 * organization has an enabled stream. The entry's own INSERT answers whether it has one (in its
 * transaction: src/services/audit/entry.ts), so an entry committed while a stream is on is never
 * missed and an organization without streams costs nothing more. The request never waits: one
 * `audit.streams` message per request and organization goes on the EVENTS queue after the commit,
 * and its consumer wakes each stream's object (src/audit-stream/), which sends in order.
 */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { auditStreams } from "../../db/schema";
import { loggableError } from "../../errors";
import { toIso } from "../../lib/time";
import { sendToQueue } from "../events/queue";
import { notMoving } from "../moves/fence";

/** The organizations a context has already announced: one message per request and organization. */
const announced = new WeakMap<ServiceContext, Set<string>>();

/** Told the result of an audit INSERT once its batch committed (see the file comment). */
export function announceEntry(ctx: ServiceContext, result: D1Result): void {
  const row = (result.results as { orgId?: string | null; streams?: number }[] | undefined)?.[0];
  if (!row?.orgId || !row.streams) return;
  let orgs = announced.get(ctx);
  if (!orgs) {
    orgs = new Set();
    announced.set(ctx, orgs);
  }
  if (orgs.has(row.orgId)) return;
  orgs.add(row.orgId);
  const orgId = row.orgId;
  ctx.waitUntil(
    sendToQueue(ctx, [{ kind: "audit.streams", org_id: orgId }]).catch((err: unknown) =>
      // The entries are committed: the cron's sweep of streams behind their organization's log
      // wakes them (src/services/audit/streams-sweep.ts).
      ctx.log.error("audit stream wake-up not queued; left to the sweep", {
        org_id: orgId,
        error: loggableError(err),
      }),
    ),
  );
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
  await Promise.all(lagging.map(({ id, orgId }) => wakeStream(ctx, id, orgId)));
  return lagging.length;
}
