/**
 * An environment's protection (API_CONTRACT §26): read, replaced, locked and unlocked.
 *
 * An environment without a row has the defaults (nothing required, not locked, `updated_at`
 * null): the row is written by the first change. What the settings do to deployments is
 * src/services/deployments/gate.ts: settings apply to deployments created after them (a waiting
 * deployment keeps the `required_approvals` and `wait_until` it was created with); a lock and an
 * unlock change the gates of the environment's waiting deployments at once.
 */
import { and, eq, isNotNull, isNull, type SQL, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindQuery, tableReader } from "../../db/compiled";
import { deployments, environmentProtections, environments } from "../../db/schema";
import { assertEchoMatches, conflict, notFound } from "../../errors";
import { nowIso } from "../../lib/time";
import type { ProtectionRecord } from "../../schemas/protection";
import type { LockInput, ProtectionReplaceInput } from "../../schemas/protection-writes";
import { authorizedLookup } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { contained } from "../contained";
import { settleEnvironment } from "../deployments/gate";
import { lookupThen } from "../lookup";
import { checkIfMatch, preconditionFailed } from "../preconditions";

type ProtectionRow = typeof environmentProtections.$inferSelect;

export const DEFAULT_PROTECTION = {
  requiredApprovals: 0,
  reviewerRole: "owner",
  preventSelfReview: true,
  waitTimer: 0,
  concurrency: "parallel",
} as const;

export function toProtectionRecord(environmentId: string, row: ProtectionRow | undefined): ProtectionRecord {
  const p = row ?? {
    ...DEFAULT_PROTECTION,
    lockedReason: null,
    lockedAccountId: null,
    lockedAt: null,
    updatedAt: null,
  };
  return {
    environment_id: environmentId,
    required_approvals: p.requiredApprovals,
    reviewer_role: p.reviewerRole,
    prevent_self_review: p.preventSelfReview,
    wait_timer: p.waitTimer,
    concurrency: p.concurrency,
    locked:
      p.lockedAt === null
        ? null
        : { reason: p.lockedReason ?? "", account_id: p.lockedAccountId ?? "", at: p.lockedAt },
    updated_at: p.updatedAt,
  };
}

const readProtectionRow = tableReader(environmentProtections);

const readRow = (ctx: CallerContext, environmentId: string) =>
  bindQuery(
    ctx.db,
    ctx.db
      .select()
      .from(environmentProtections)
      .where(eq(environmentProtections.environmentId, environmentId)),
  );

/** The environment's lookup (with `action` checked) and its protection: one round trip. */
async function readProtection(ctx: CallerContext, environmentId: string, action: "read" | "manage") {
  const { db, identity } = ctx;
  const {
    found: { row: environment },
    results: [rows],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, environments, environmentId, action, "Environment"),
    readRow(ctx, environmentId),
  );
  const row = rows[0] ? readProtectionRow(rows[0]) : undefined;
  return { environment, row, record: toProtectionRecord(environmentId, row) };
}

export async function getEnvironmentProtection(ctx: CallerContext, environmentId: string) {
  return (await readProtection(ctx, environmentId, "read")).record;
}

/** The write's condition: the row is still as read (or still absent), for If-Match's one atomic step. */
const stillAsRead = (row: ProtectionRow | undefined): SQL =>
  row
    ? sql`${environmentProtections.updatedAt} IS ${row.updatedAt} AND ${environmentProtections.lockedAt} IS ${row.lockedAt}`
    : sql`0`;

/** `replaceEnvironmentProtection`: the five settings (project `owner`); the lock stays as it is. */
export async function replaceEnvironmentProtection(
  ctx: CallerContext,
  environmentId: string,
  input: ProtectionReplaceInput,
): Promise<ProtectionRecord> {
  assertEchoMatches(input, { environment_id: environmentId });
  const { db } = ctx;
  const { environment, row, record } = await readProtection(ctx, environmentId, "manage");
  const guarded = await checkIfMatch(ctx, record);
  const now = nowIso();
  const settings = {
    requiredApprovals: input.required_approvals,
    reviewerRole: input.reviewer_role,
    preventSelfReview: input.prevent_self_review,
    waitTimer: input.wait_timer,
    concurrency: input.concurrency,
    updatedAt: now,
  };
  const after = toProtectionRecord(environmentId, {
    ...(row ?? { lockedReason: null, lockedAccountId: null, lockedAt: null, checks: [] }),
    environmentId,
    projectId: environment.projectId,
    ...settings,
  });
  const upsert = db
    .insert(environmentProtections)
    .values({ environmentId, projectId: environment.projectId, ...settings })
    .onConflictDoUpdate({
      target: environmentProtections.environmentId,
      set: settings,
      ...(guarded ? { setWhere: stillAsRead(row) } : {}),
    })
    .returning();
  const [written] = await db.batch([
    upsert,
    auditEntry(ctx, {
      target: { type: "environment_protection", id: environmentId },
      projectId: environment.projectId,
      changes: diffRecords(record, after),
    }),
  ]);
  if (!written[0]) throw preconditionFailed();
  return toProtectionRecord(environmentId, written[0]);
}

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
      setWhere: and(isNull(environmentProtections.lockedAt), guarded ? stillAsRead(row) : undefined),
    })
    .returning();
  const after = toProtectionRecord(environmentId, {
    ...(row ?? { ...DEFAULT_PROTECTION, environmentId, projectId: environment.projectId }),
    ...lock,
  } as ProtectionRow);
  const [written] = await db.batch([
    upsert,
    auditEntry(ctx, {
      target: { type: "environment_protection", id: environmentId },
      projectId: environment.projectId,
      changes: diffRecords(record, after),
    }),
    // Every waiting deployment of the environment is held by the lock now (its gate says so).
    db
      .update(deployments)
      .set({ gate: sql`json_insert(${deployments.gate}, '$.blocked_by[#]', 'lock')`, updatedAt: now })
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
    // Locked and unlocked again by others since it was read, with no If-Match: lock it now.
    if (attempt < LOCK_ATTEMPTS) return lockEnvironment(ctx, environmentId, input, attempt + 1);
    throw conflict("The environment's lock kept changing; try again.");
  }
  return toProtectionRecord(environmentId, written[0]);
}

/** How often a lock without If-Match is tried again when others lock and unlock in between. */
const LOCK_ATTEMPTS = 5;

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
export async function unlockEnvironment(ctx: CallerContext, environmentId: string): Promise<void> {
  const { db } = ctx;
  const { environment, row, record } = await readProtection(ctx, environmentId, "manage");
  const guarded = await checkIfMatch(ctx, record);
  if (record.locked) {
    const now = nowIso();
    const [unlocked] = await db.batch([
      db
        .update(environmentProtections)
        .set({ lockedReason: null, lockedAccountId: null, lockedAt: null, updatedAt: now })
        .where(
          and(
            eq(environmentProtections.environmentId, environmentId),
            isNotNull(environmentProtections.lockedAt),
            guarded ? stillAsRead(row) : undefined,
          ),
        )
        .returning({ environmentId: environmentProtections.environmentId }),
      auditEntry(ctx, {
        target: { type: "environment_protection", id: environmentId },
        projectId: environment.projectId,
        changes: diffRecords(record, { ...record, locked: null, updated_at: now }),
      }),
    ]);
    if (!unlocked[0] && guarded) throw preconditionFailed();
    // Deleted with its environment meanwhile: what a moment later would answer (§17).
    if (!unlocked[0] && !(await environmentExists(ctx, environmentId))) throw notFound("Environment");
    if (unlocked[0]) {
      await contained(
        ctx,
        "unlock committed; releasing its deployments failed and is left to the cron",
        { environment_id: environmentId },
        () => settleEnvironment(ctx, environmentId),
      );
      return;
    }
  }
  await settleEnvironment(ctx, environmentId);
}
