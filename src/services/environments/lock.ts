/**
 * An environment's lock (API_CONTRACT §26): while locked, new deployments wait, queued ones leave the
 * engine's list and none starts (src/services/deployments/gate-rules.ts); an unlock releases what
 * nothing else holds. Each writes its event (`environment.locked`, `environment.unlocked`, §31) in
 * the batch of its change.
 */
import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { deployments, environmentProtections, environments } from "../../db/schema";
import { conflict, notFound } from "../../errors";
import { nowIso } from "../../lib/time";
import type { ProtectionRecord } from "../../schemas/protection";
import type { LockInput } from "../../schemas/protection-writes";
import { auditEntry, diffRecords } from "../audit/entry";
import { contained } from "../contained";
import { settleEnvironment } from "../deployments/gate";
import { gateEvent } from "../deployments/gate-checks";
import { publishAfterCommit } from "../events/queue";
import { backOff, checkIfMatch, preconditionFailed, retries } from "../preconditions";
import {
  DEFAULT_PROTECTION,
  keptChanging,
  type ProtectionRow,
  readProtection,
  stillAsRead,
  toProtectionRecord,
} from "./protection";

/**
 * `lockEnvironment`: new deployments wait, queued ones leave the engine's list and none starts
 * (src/services/deployments/gate.ts); `409` when already locked. The environment's waiting
 * deployments are held by the lock too, in the same batch.
 */
export async function lockEnvironment(
  ctx: CallerContext,
  environmentId: string,
  input: LockInput,
  attempt = 1,
  again = retries(),
): Promise<ProtectionRecord> {
  const { db, identity } = ctx;
  const { environment, row, record } = await readProtection(ctx, environmentId, "manage");
  const guarded = await checkIfMatch(ctx, record);
  if (record.locked) throw alreadyLocked(record.locked.reason);
  const now = nowIso();
  const lock = {
    lockedReason: input.reason,
    lockedAccountId: identity.accountId,
    lockedAt: now,
    updatedAt: now,
  };
  const upsert = db
    .insert(environmentProtections)
    .values({ environmentId, projectId: environment.projectId, ...DEFAULT_PROTECTION, ...lock })
    .onConflictDoUpdate({
      target: environmentProtections.environmentId,
      set: lock,
      // As read, even without If-Match: the event's protection and the entry's `changes` are from it.
      setWhere: and(isNull(environmentProtections.lockedAt), stillAsRead(row)),
    })
    .returning();
  const after = toProtectionRecord(environmentId, {
    ...(row ?? { ...DEFAULT_PROTECTION, environmentId, projectId: environment.projectId }),
    ...lock,
  } as ProtectionRow);
  // Written exactly when the entry is, which is exactly when the lock is (§31).
  const locked = gateEvent(
    ctx,
    environment.projectId,
    "environment.locked",
    { environment_id: environmentId, protection: after },
    "if-changed",
    now,
  );
  const [written] = await db.batch([
    upsert,
    auditEntry(ctx, {
      target: { type: "environment_protection", id: environmentId },
      projectId: environment.projectId,
      changes: diffRecords(record, after),
    }),
    locked.insert,
    // Every waiting deployment of the environment is held by the lock now (its gate says so), in
    // the order `blocked_by` always has (src/services/deployments/gate.ts `blockedBy`: approval,
    // wait_timer, lock, check): before `check`, the only one after it.
    db
      .update(deployments)
      .set({
        gate: sql`json_set(${deployments.gate}, '$.blocked_by', json(CASE WHEN EXISTS (SELECT 1 FROM json_each(${deployments.gate}, '$.blocked_by') WHERE value = 'check') THEN json_insert(json((SELECT json_group_array(value) FROM json_each(${deployments.gate}, '$.blocked_by') WHERE value <> 'check')), '$[#]', 'lock', '$[#]', 'check') ELSE json_insert(json_extract(${deployments.gate}, '$.blocked_by'), '$[#]', 'lock') END))`,
        updatedAt: now,
      })
      .where(
        and(
          eq(deployments.environmentId, environmentId),
          eq(deployments.status, "waiting"),
          isNotNull(deployments.gate),
          sql`NOT EXISTS (SELECT 1 FROM json_each(${deployments.gate}, '$.blocked_by') WHERE value = 'lock')`,
          sql`EXISTS (SELECT 1 FROM environment_protections WHERE environment_id = ${environmentId} AND locked_at = ${now})`,
        ),
      ),
  ]);
  if (!written[0]) {
    const current = await db
      .select()
      .from(environmentProtections)
      .where(eq(environmentProtections.environmentId, environmentId))
      .get();
    // Gone with its environment meanwhile: what a moment later would answer (§17).
    if (!current) throw notFound("Environment");
    // The record changed since it was read (locked by another, say): with If-Match, the
    // precondition fails first (§12; RFC 9110 §13.2.2), as a PUT of it would.
    if (guarded) throw preconditionFailed();
    if (current.lockedAt) throw alreadyLocked(current.lockedReason ?? "");
    // Changed by others since it was read (its settings, or locked and unlocked again), with no
    // If-Match: lock it now, from what is there.
    if (!again(attempt)) throw keptChanging();
    await backOff(attempt);
    return lockEnvironment(ctx, environmentId, input, attempt + 1, again);
  }
  publishAfterCommit(ctx, locked.event.id);
  return toProtectionRecord(environmentId, written[0]);
}

async function environmentExists(ctx: CallerContext, environmentId: string): Promise<boolean> {
  const found = await ctx.db
    .select({ id: environments.id })
    .from(environments)
    .where(eq(environments.id, environmentId))
    .get();
  return found !== undefined;
}

const alreadyLocked = (reason: string) =>
  conflict(`The environment is already locked ("${reason}"); unlock it first to lock it again.`);

/**
 * `unlockEnvironment`: `204` whether it was locked or not. Every waiting deployment that nothing
 * else holds is released, in this request. Once this request's unlock has committed, a failure to
 * release them is logged, not answered (a 5xx says nothing changed, API_CONTRACT §11): the cron
 * releases what a lock it no longer has still holds (src/services/deployments/gate-sweeps.ts
 * `settleOverdueGates`), as it does after a crash at that point.
 */
export async function unlockEnvironment(
  ctx: CallerContext,
  environmentId: string,
  attempt = 1,
  again = retries(),
): Promise<void> {
  const { db } = ctx;
  const { environment, row, record } = await readProtection(ctx, environmentId, "manage");
  const guarded = await checkIfMatch(ctx, record);
  if (record.locked) {
    const now = nowIso();
    const after = { ...record, locked: null, updated_at: now };
    const event = gateEvent(
      ctx,
      environment.projectId,
      "environment.unlocked",
      { environment_id: environmentId, protection: after },
      "if-changed",
      now,
    );
    const [unlocked] = await db.batch([
      db
        .update(environmentProtections)
        .set({ lockedReason: null, lockedAccountId: null, lockedAt: null, updatedAt: now })
        .where(
          and(
            eq(environmentProtections.environmentId, environmentId),
            isNotNull(environmentProtections.lockedAt),
            // As read, even without If-Match: the event's protection and the entry are from it.
            stillAsRead(row),
          ),
        )
        .returning({ environmentId: environmentProtections.environmentId }),
      auditEntry(ctx, {
        target: { type: "environment_protection", id: environmentId },
        projectId: environment.projectId,
        changes: diffRecords(record, after),
      }),
      event.insert,
    ]);
    if (!unlocked[0] && guarded) throw preconditionFailed();
    // Deleted with its environment meanwhile: what a moment later would answer (§17).
    if (!unlocked[0] && !(await environmentExists(ctx, environmentId))) throw notFound("Environment");
    if (!unlocked[0]) {
      // Changed since it was read (its settings, or unlocked by another): from what is there now.
      if (!again(attempt)) throw keptChanging();
      await backOff(attempt);
      return unlockEnvironment(ctx, environmentId, attempt + 1, again);
    }
    publishAfterCommit(ctx, event.event.id);
    await contained(
      ctx,
      "unlock committed; releasing its deployments failed and is left to the cron",
      { environment_id: environmentId },
      () => settleEnvironment(ctx, environmentId),
    );
    return;
  }
  await settleEnvironment(ctx, environmentId);
}
