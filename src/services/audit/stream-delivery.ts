/**
 * What an audit stream sends, and what its receiver's answer changes (API_CONTRACT §30). Run only by
 * the stream's own object (src/audit-stream/object.ts), one run at a time, so a stream's batches
 * go out one after the other: a batch is sent only once every entry before it was acknowledged.
 *
 * A batch is the entries after `delivered_through`, up to 100 with consecutive sequences, one §14
 * record a line (exactly as the audit log API serves it), signed as Standard Webhooks with
 * `webhook-id` `<stream>.<first sequence>`; the batch's extent is recorded (`retry_through`) before
 * it is first sent, and every later send of that id carries the same entries until a replay
 * starts over (its first batch may then reuse an id with more entries: a receiver deduplicates by
 * `sequence`, docs/audit-streams.md). A `2xx` within 10 s
 * moves `delivered_through` to its last sequence, by a compare-and-set on the stream's `epoch` and
 * position: a replay, a resume or a new url since the batch left moves nothing (a pause alone does
 * not: the receiver did acknowledge it, ./streams.ts). Anything else is a
 * failed attempt (its `last_error` recorded even then), tried again after about 1 s, 5 s, 30 s,
 * then every 60 s, with no end; `410 Gone` pauses the stream. Nothing is ever skipped: a crash before the acknowledgement is recorded
 * leaves `delivered_through` where it was, and the batch is sent again.
 */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { auditLog, auditStreams } from "../../db/schema";
import { nowIso, toIso } from "../../lib/time";
import { attemptSignedPost } from "../../webhooks/deliver";
import { ENTRY_WEIGHT, toAuditEntryRecord, withEntryParts } from "./log";

/** The most entries a batch holds (§30). */
export const STREAM_BATCH_ENTRIES = 100;
/** The most bytes of entries' `changes` and other free text a batch carries, but its first entry. */
export const STREAM_BATCH_BYTES = 4 * 1024 * 1024;
/** A receiver acknowledges with a `2xx` within 10 s (§30). */
export const STREAM_TIMEOUT_MS = 10_000;
/** After the 1st, 2nd, 3rd failed attempt, and every one after (§30). */
export const STREAM_RETRY_MS = [1_000, 5_000, 30_000, 60_000] as const;

/** How long after its `failures`-th failed attempt in a row a batch is tried again. */
export function retryDelayMs(failures: number, schedule: readonly number[] = STREAM_RETRY_MS): number {
  const at = Math.min(Math.max(failures, 1), schedule.length) - 1;
  return schedule[at] ?? 60_000;
}

type StreamRow = typeof auditStreams.$inferSelect;
type EntryRow = typeof auditLog.$inferSelect;

/**
 * The stream and its next batch in one round trip: the first 100 entries after its position, fewer
 * when their free text passes STREAM_BATCH_BYTES (never fewer than one). A new batch's last
 * sequence is claimed (`retry_through`) in the same step, before anything is sent: whatever
 * happens to its attempt (a failure, an acknowledgement that could not be recorded, a crash, a
 * move's switch), its `webhook-id` is sent again with exactly these entries, never more or fewer,
 * until a replay clears the claim.
 * In a database the organization is leaving (a move's fence), the claim is refused and nothing is
 * sent from there.
 */
async function readNext(
  ctx: ServiceContext,
  streamId: string,
): Promise<{ stream?: StreamRow; entries: EntryRow[] }> {
  const { db } = ctx;
  const position = sql`(SELECT delivered_through FROM audit_streams WHERE id = ${streamId})`;
  // The claimed batch's last entry (`retry_through`), while it is ahead of the position.
  const bound = sql`(SELECT CASE WHEN retry_through > delivered_through THEN retry_through END FROM audit_streams WHERE id = ${streamId})`;
  const org = sql`(SELECT org_id FROM audit_streams WHERE id = ${streamId})`;
  const size = sql.raw(ENTRY_WEIGHT);
  const batch = sql`SELECT id, sequence FROM (SELECT id, sequence, sum(size) OVER (ORDER BY sequence) AS running, row_number() OVER (ORDER BY sequence) AS n FROM (SELECT id, sequence, ${size} AS size FROM audit_log WHERE org_id = ${org} AND sequence > ${position} AND (${bound} IS NULL OR sequence <= ${bound}) ORDER BY sequence LIMIT ${STREAM_BATCH_ENTRIES})) WHERE n = 1 OR running <= ${STREAM_BATCH_BYTES}`;
  const [, streams, entries] = await db.batch([
    db
      .update(auditStreams)
      .set({ retryThrough: sql`(SELECT max(sequence) FROM (${batch}))` })
      .where(
        and(
          eq(auditStreams.id, streamId),
          eq(auditStreams.enabled, true),
          sql`(${auditStreams.retryThrough} IS NULL OR ${auditStreams.retryThrough} <= ${auditStreams.deliveredThrough})`,
          sql`(${auditStreams.nextAttemptAt} IS NULL OR ${auditStreams.nextAttemptAt} <= ${nowIso()})`,
          sql`EXISTS (${batch})`,
        ),
      ),
    db.select().from(auditStreams).where(eq(auditStreams.id, streamId)),
    db
      .select()
      .from(auditLog)
      .where(sql`${auditLog.id} IN (SELECT id FROM (${batch}))`)
      .orderBy(auditLog.sequence),
  ]);
  return { stream: streams[0], entries: await withEntryParts(db, entries) };
}

/** The batch's body: one §14 record a line, each ending in `\n`. */
export function ndjsonOf(entries: readonly EntryRow[]): string {
  return entries.map((entry) => `${JSON.stringify(toAuditEntryRecord(entry))}\n`).join("");
}

/** What the object does next: run again at `at` (ms), or nothing until it is woken. */
export type NextRun = { at: number } | null;

/**
 * Sends the stream's batches one after the other until it is caught up, a batch fails, or
 * `budgetMs` has passed; answers when to run again. Throws only when D1 fails (the object's alarm
 * is then retried).
 */
export async function deliverStream(
  ctx: ServiceContext,
  streamId: string,
  budgetMs: number,
  schedule: readonly number[] = STREAM_RETRY_MS,
): Promise<NextRun> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const { stream, entries } = await readNext(ctx, streamId);
    if (!stream?.enabled) return null;
    const due = stream.nextAttemptAt === null ? 0 : Date.parse(stream.nextAttemptAt);
    if (due > Date.now()) return { at: due };
    const first = entries[0]?.sequence;
    const last = entries.at(-1)?.sequence;
    if (first == null || last == null) return null;
    const outcome = await attemptSignedPost(
      stream.url,
      {
        id: `${stream.id}.${first}`,
        body: ndjsonOf(entries),
        contentType: "application/x-ndjson",
        signingSecrets: [stream.signingSecret],
      },
      { allowInsecure: ctx.config.allowInsecureWebhooks, timeoutMs: STREAM_TIMEOUT_MS },
    );
    const asSent = and(
      eq(auditStreams.id, stream.id),
      eq(auditStreams.epoch, stream.epoch),
      eq(auditStreams.deliveredThrough, stream.deliveredThrough),
    );
    if (outcome.ok) {
      await ctx.db
        .update(auditStreams)
        .set({
          deliveredThrough: last,
          failures: 0,
          retryThrough: null,
          nextAttemptAt: null,
          lastErrorAt: null,
          lastErrorStatusCode: null,
          lastErrorMessage: null,
        })
        .where(asSent)
        .run();
      if (Date.now() >= deadline) return { at: Date.now() };
      continue;
    }
    const gone = outcome.statusCode === 410;
    const failures = stream.failures + 1;
    const next = Date.now() + retryDelayMs(failures, schedule);
    const now = nowIso();
    const lastError = {
      lastErrorAt: now,
      lastErrorStatusCode: outcome.statusCode,
      lastErrorMessage: outcome.error ?? "The attempt failed.",
    };
    const failed = await ctx.db
      .update(auditStreams)
      .set({
        failures,
        retryThrough: last,
        nextAttemptAt: toIso(next),
        ...lastError,
        // `410 Gone`: the receiver asks for no more; the stream pauses (`enabled: true` resumes it).
        ...(gone ? { enabled: false, epoch: stream.epoch + 1, updatedAt: now } : {}),
      })
      .where(asSent)
      .run();
    if (!failed.meta.changes) {
      // Resumed, replayed or sent elsewhere while the batch was out: the new epoch keeps its own
      // schedule (and a 410 of the old url pauses nothing), but the attempt did fail, and
      // `last_error` is the last failed attempt (§30). Nothing was acknowledged since: this object
      // runs one attempt at a time, and a replay that moved `delivered_through` is left as it is.
      await ctx.db
        .update(auditStreams)
        .set(lastError)
        .where(
          and(eq(auditStreams.id, stream.id), eq(auditStreams.deliveredThrough, stream.deliveredThrough)),
        )
        .run();
      // The change's wake-up came while this run was out, and this answer replaces it: run again
      // at once, by what the stream says now (a resumed stream or a new url tries at once).
      return { at: Date.now() };
    }
    return gone ? null : { at: next };
  }
}
