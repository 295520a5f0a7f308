/**
 * An environment's protection (API_CONTRACT §26, its checks §31): read and replaced; its lock is
 * ./lock.ts.
 *
 * An environment without a row has the defaults (nothing required, not locked, `updated_at`
 * null): the row is written by the first change. What the settings do to deployments is
 * src/services/deployments/gate.ts: settings apply to deployments created after them (a waiting
 * deployment keeps the `required_approvals`, `wait_until` and checks it was created with); a lock
 * and an unlock change the gates of the environment's waiting deployments at once.
 */
import { eq, type SQL, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindQuery, tableReader } from "../../db/compiled";
import { environmentProtections, environments, type ProtectionCheck } from "../../db/schema";
import { assertEchoMatches, conflict } from "../../errors";
import { nowIso } from "../../lib/time";
import type { ProtectionRecord } from "../../schemas/protection";
import type { ProtectionReplaceInput } from "../../schemas/protection-writes";
import { authorizedLookup } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { lookupThen } from "../lookup";
import { backOff, checkIfMatch, preconditionFailed, retries } from "../preconditions";

export type ProtectionRow = typeof environmentProtections.$inferSelect;

export const DEFAULT_PROTECTION = {
  requiredApprovals: 0,
  reviewerRole: "owner" as const,
  preventSelfReview: true,
  waitTimer: 0,
  concurrency: "parallel" as const,
  checks: [] as ProtectionCheck[],
};

export function toProtectionRecord(
  environmentId: string,
  // What the record shows: not when the policy took its value, which only the rules read.
  row: Omit<ProtectionRow, "concurrencySince"> | undefined,
): ProtectionRecord {
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
    checks: p.checks,
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
export async function readProtection(ctx: CallerContext, environmentId: string, action: "read" | "manage") {
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
export const stillAsRead = (row: ProtectionRow | undefined): SQL =>
  row
    ? sql`${environmentProtections.updatedAt} IS ${row.updatedAt} AND ${environmentProtections.lockedAt} IS ${row.lockedAt}`
    : sql`0`;

/** `replaceEnvironmentProtection`: the five settings (project `owner`); the lock stays as it is. */
export async function replaceEnvironmentProtection(
  ctx: CallerContext,
  environmentId: string,
  input: ProtectionReplaceInput,
  attempt = 1,
  again = retries(),
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
    checks: input.checks ?? [],
    updatedAt: now,
  };
  const after = toProtectionRecord(environmentId, {
    ...(row ?? { lockedReason: null, lockedAccountId: null, lockedAt: null }),
    environmentId,
    projectId: environment.projectId,
    ...settings,
  });
  // When the policy took its value (src/db/release-tables.ts `concurrencySince`): kept by a PUT
  // that leaves it as it was.
  const concurrencySince = sql`CASE WHEN ${environmentProtections.concurrency} = ${input.concurrency} THEN ${environmentProtections.concurrencySince} ELSE ${now} END`;
  const upsert = db
    .insert(environmentProtections)
    .values({ environmentId, projectId: environment.projectId, ...settings, concurrencySince: now })
    .onConflictDoUpdate({
      target: environmentProtections.environmentId,
      set: { ...settings, concurrencySince },
      // As read: the entry's `changes` are from it (§14), even without If-Match.
      setWhere: stillAsRead(row),
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
  if (!written[0]) {
    // Changed since it was read: with If-Match the precondition fails (§12); without, it is
    // written again from what is there now, so its entry says what this write changed.
    if (guarded) throw preconditionFailed();
    if (!again(attempt)) throw keptChanging();
    await backOff(attempt);
    return replaceEnvironmentProtection(ctx, environmentId, input, attempt + 1, again);
  }
  return toProtectionRecord(environmentId, written[0]);
}

/** A write without If-Match that lost every race (src/services/preconditions.ts `retries`). */
export const keptChanging = () =>
  conflict("The environment's protection kept changing while this request was applied; try again.");
