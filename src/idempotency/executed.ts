/**
 * Idempotency-Key (API_CONTRACT §11) in D1: the write's own record of the key it ran under.
 *
 * The limiter object (./store.ts) claims a key and keeps the answer, but it learns the answer
 * only after the write has committed. A request that dies in between (its isolate killed) leaves
 * a claim that lapses after its lease, and a retry would then execute the write again. So the key
 * also commits with the write itself: a keyed write's audit entry, written in the change's own
 * batch by the one writer every change goes through (src/services/audit/entry.ts), carries the
 * key and the request's fingerprint under a unique index (src/db/audit-table.ts). Then:
 * - a claim that finds the key lapsed asks D1 first (one indexed read, on that path only) and,
 *   when the key committed, answers what that execution did instead of executing;
 * - any other second execution of a committed key (its first request outlived the lease and
 *   committed meanwhile) fails whole at its entry's insert, and is answered the same way;
 * - a write that changed nothing wrote no entry and holds no key: it may run again, harmlessly.
 *
 * What the execution answered is rebuilt from its entry: its route's success status and, for a
 * write that answers one record, that record as it is now (read again, as a replay by reference
 * is), as the route declares it (`lostAnswer` on `defineRoute`). An answer that cannot be rebuilt
 * (a signing secret shown once, a count, a list) becomes a 409 saying so: the request still never executes again. The cron forgets keys older than 24 h in
 * bounded chunks; a request that meets an older one first forgets it itself.
 */
import { and, asc, eq, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { ExecutingKey, ServiceContext } from "../context";
import type { Db } from "../db/client";
import { notMoving } from "../db/moving";
import { auditLog } from "../db/schema";
import { PRIMARY } from "../db/session";
import { ApiError } from "../errors";
import type { RouteMeta } from "../http/route-meta";
import { toIso } from "../lib/time";
import { IDEMPOTENCY_TTL_MS, type StoredAnswer } from "./store";

/** A write that committed under a key: its audit entry, as far as an answer needs it. */
export type ExecutedWrite = {
  entryId: string;
  action: string;
  targetId: string;
  fingerprint: string | null;
  createdAt: string;
};

/** The entry that committed `key` for API key `apiKeyId`, read on the primary (it may be seconds old). */
export async function findExecuted(
  ctx: ServiceContext,
  apiKeyId: string,
  key: string,
): Promise<ExecutedWrite | undefined> {
  return executedQuery(ctx.openSession(PRIMARY).db, apiKeyId, key).get();
}

/** The lookup of `findExecuted`: one row of the unique index of keys. */
export function executedQuery(db: Db, apiKeyId: string, key: string) {
  return db
    .select({
      entryId: auditLog.id,
      action: auditLog.action,
      targetId: auditLog.targetId,
      fingerprint: auditLog.idempotencyFingerprint,
      createdAt: auditLog.createdAt,
    })
    .from(auditLog)
    .where(and(eq(auditLog.actorApiKeyId, apiKeyId), eq(auditLog.idempotencyKey, key)));
}

/** Whether the key this write committed is past its 24 h (API_CONTRACT §11) and so forgotten. */
export const isForgotten = (executed: ExecutedWrite, nowMs = Date.now()) =>
  executed.createdAt <= toIso(nowMs - IDEMPOTENCY_TTL_MS);

const clearKey = { idempotencyKey: null, idempotencyFingerprint: null };

/** Forgets the key one entry holds (the entry itself stays: it is the audit log's). */
export async function forgetKey(ctx: ServiceContext, entryId: string): Promise<void> {
  await ctx.openSession(PRIMARY).db.update(auditLog).set(clearKey).where(eq(auditLog.id, entryId)).run();
}

/**
 * A 5xx answer keeps nothing (API_CONTRACT §11: the key is released, a retry executes again): the
 * key is taken back from whichever entry this execution wrote before it failed (a change it then
 * undid, or could not finish). Costs nothing when it built none.
 */
export async function releaseKey(ctx: ServiceContext, executing: ExecutingKey): Promise<void> {
  if (executing.entryIds.length === 0) return;
  await ctx.db
    .update(auditLog)
    .set(clearKey)
    .where(
      and(
        sql`${auditLog.id} IN (SELECT value FROM json_each(${JSON.stringify(executing.entryIds)}))`,
        eq(auditLog.idempotencyKey, executing.key),
      ),
    )
    .run();
}

/**
 * The answer `executed` gave, as a stored answer of the limiter: its route's success status, and
 * the record it carried by reference (read again on replay, `ref`); or, when that cannot be
 * rebuilt, a 409 that says the request ran and will not run again.
 */
export function rebuiltAnswer(
  meta: RouteMeta | undefined,
  executed: ExecutedWrite,
  path: string,
): StoredAnswer {
  // The route that answers the retry declares how (its `lostAnswer`, src/http/route-meta.ts).
  const declared = meta?.operationId === executed.action ? meta.lostAnswer : undefined;
  const status = meta?.success;
  if (declared?.rebuild === "status" && status === 204) return { status, headers: {}, body: null, ref: null };
  const record =
    declared?.rebuild !== "record"
      ? undefined
      : declared.from === "request-path"
        ? path
        : declared.from.replace("{target}", executed.targetId);
  if (status === undefined || record === undefined) {
    return unreplayableAnswer(
      `was executed at ${executed.createdAt}, but its answer was lost and cannot be rebuilt${declared?.rebuild === "none" ? ` (${declared.why})` : ""}`,
    );
  }
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (status === 201) headers.location = record;
  else if (record !== path) headers["content-location"] = record;
  return { status, headers, body: null, ref: record };
}

/**
 * The answer to a request whose key's execution happened but whose answer cannot be given
 * (`why`): a 409 that says it will not execute again.
 */
export function unreplayableAnswer(why: string): StoredAnswer {
  const refusal = new ApiError(
    "conflict",
    `This Idempotency-Key's request ${why}; it will not execute again. Read the current state, or ` +
      "send a new Idempotency-Key to make a new request.",
    [{ path: "header.idempotency-key", message: "Already executed; its answer cannot be replayed." }],
  );
  return {
    status: refusal.status,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(refusal.toBody()),
    ref: null,
  };
}

/** Keys cleared per statement, and statements per cron run (a backlog is finished by later runs). */
export const FORGET_BATCH = 1000;
export const FORGET_MAX_STATEMENTS = 100;

/**
 * The cron's half: clears the keys of entries older than 24 h, oldest first, FORGET_BATCH at a
 * time (through the partial index of keyed entries), at most FORGET_MAX_STATEMENTS statements.
 * Returns how many it cleared and whether none is left.
 */
export async function forgetExpiredKeys(
  ctx: ServiceContext,
  nowMs = Date.now(),
  limits = { batch: FORGET_BATCH, maxStatements: FORGET_MAX_STATEMENTS },
): Promise<{ cleared: number; done: boolean }> {
  const cutoff = toIso(nowMs - IDEMPOTENCY_TTL_MS);
  let cleared = 0;
  for (let statements = 0; statements < limits.maxStatements; statements++) {
    const rows = await forgetChunk(ctx.db, cutoff, limits.batch);
    cleared += rows;
    if (rows < limits.batch) return { cleared, done: true };
  }
  return { cleared, done: false };
}

/** The entries holding keys written at or before `cutoff` (ISO time), oldest first, `batch` of them. */
export function expiredKeysQuery(db: Db, cutoff: string, batch: number) {
  return db
    .select({ id: auditLog.id })
    .from(auditLog)
    .where(
      and(
        isNotNull(auditLog.idempotencyKey),
        lte(auditLog.createdAt, cutoff),
        // Not a moving organization's (src/db/moving.ts): its source forgets them, captured.
        notMoving(sql`${auditLog.orgId}`),
      ),
    )
    .orderBy(asc(auditLog.createdAt))
    .limit(batch);
}

async function forgetChunk(db: Db, cutoff: string, batch: number): Promise<number> {
  // RETURNING counts exactly the rows cleared.
  const rows = await db
    .update(auditLog)
    .set(clearKey)
    .where(inArray(auditLog.id, expiredKeysQuery(db, cutoff, batch)))
    .returning({ id: auditLog.id })
    .all();
  return rows.length;
}
