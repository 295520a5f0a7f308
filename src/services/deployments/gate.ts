/**
 * The gate of a protected environment (API_CONTRACT §26): what makes a new deployment `waiting`
 * instead of `queued`, what still holds it (`blocked_by`), and its release.
 *
 * - At creation the deployment's own INSERT decides (`createdStatus`, `createdGate`), from the
 *   environment's protection as the insert finds it: a create in an unprotected environment
 *   reads nothing more, and a protection changing at the same moment is wholly before or after.
 * - Afterwards the facts that hold a deployment change one way only, but for the lock: approvals
 *   only grow and time only passes. `settleGate` recomputes `blocked_by` from them and releases
 *   the deployment when nothing holds it, with a compare-and-set on the row whose condition also
 *   says "not locked", so a release racing a lock either lands before it (and the lock keeps the
 *   queued deployment from the engine) or sees it; two releases at once release once.
 * - A wait timer is held by the environment's gate object (src/gate/object.ts), whose alarm
 *   settles the deployment when `wait_until` passes, without any request; the cron's sweep
 *   settles any whose alarm was lost (./gate-sweeps.ts).
 * - Lock and concurrency are applied where the engine takes work (`engineMayStart`,
 *   `engineQueueCondition`); `supersede` cancels older deployments when a newer one is queued.
 * - What follows a committed write (a timer handed to the gate object, a `supersede`'s cancels)
 *   is its consequence, not part of it: its failure is logged and never becomes the request's
 *   answer (`afterCommit`), for a 5xx says nothing changed (API_CONTRACT §11) and a retry of a
 *   create would make a second deployment.
 */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import {
  type DeploymentGate,
  deploymentReviews,
  deployments,
  environmentProtections,
  type GateCheck,
} from "../../db/schema";
import type { DeploymentRecord } from "../../schemas/deployment";
import { publishAfterCommit } from "../events/queue";
import { afterCommit, supersedeOlder } from "./gate-after";
import {
  checksHold,
  checksOf,
  failedCheck,
  failedCheckReason,
  nextDue,
  publishAsDecided,
  settledEvents,
  timeOutChecks,
} from "./gate-checks";
import { scheduleGateTimer } from "./gate-timer";
import { type DeploymentRow, toDeploymentRecord } from "./record";
import { notifyFollowers, recordedEntries, statusEntriesInsert } from "./timeline";
import { plannedCancel, transitionedColumns } from "./transition-plan";
import { cancelAsConsequence } from "./transitions";

/** What holds a waiting deployment now, in the contract's order (§26), then its checks (§31). */
export function blockedBy(
  gate: DeploymentGate,
  approvals: number,
  locked: boolean,
  now: number,
  checks: boolean,
) {
  const out: DeploymentGate["blocked_by"] = [];
  if (approvals < gate.required_approvals) out.push("approval");
  if (gate.wait_until !== null && Date.parse(gate.wait_until) > now) out.push("wait_timer");
  if (locked) out.push("lock");
  if (checks) out.push("check");
  return out;
}

/** The deployment's reviews of one state (SQL condition on `deployment_reviews`). */
export const reviewsOf = (deploymentId: string, state: "approved" | "rejected") =>
  and(eq(deploymentReviews.deploymentId, deploymentId), eq(deploymentReviews.state, state));

const rejectedReview = (deploymentId: string) => reviewsOf(deploymentId, "rejected");

/** The timeline's reason for a deployment a review rejected. */
export const rejectionReason = (accountId: string) => `Rejected by account ${accountId}.`;

const isLocked = (environmentId: string) =>
  sql`EXISTS (SELECT 1 FROM environment_protections WHERE environment_id = ${environmentId} AND locked_at IS NOT NULL)`;
const notLocked = (environmentId: string) => sql`NOT ${isLocked(environmentId)}`;

/**
 * Whether the environment is locked now, and the condition that it still is as read, for the
 * compare-and-set of a step that computes `blocked_by` from it (a check's conclusion, ./checks.ts):
 * a lock or an unlock between the read and the write fails it, and the step reads again.
 */
export async function lockAsRead(ctx: ServiceContext, environmentId: string) {
  const protection = await ctx.db
    .select({ lockedAt: environmentProtections.lockedAt })
    .from(environmentProtections)
    .where(eq(environmentProtections.environmentId, environmentId))
    .get();
  const locked = Boolean(protection?.lockedAt);
  return {
    locked,
    unchanged: locked ? isLocked(environmentId) : notLocked(environmentId),
  };
}

/** Strictly later than `previous`: every write gives the row a new version (as transitions do). */
export function laterThan(previous: string): string {
  const now = Date.now();
  const prev = Date.parse(previous);
  return new Date(Number.isNaN(prev) || now > prev ? now : prev + 1).toISOString();
}

/**
 * Recomputes a waiting deployment's gate from the facts and releases it (`waiting → queued`,
 * timeline entry, `deployment.released`, followers told, `supersede` applied) when nothing holds
 * it any more. Checks whose deadline passed conclude by themselves here (§31), each with its
 * `deployment.check_concluded`; a failed one cancels the deployment in the same write. Harmless on
 * a deployment that is not waiting, or settled twice: answers its row as it leaves it, or
 * undefined when it is gone.
 */
export async function settleGate(
  ctx: ServiceContext,
  deploymentId: string,
): Promise<DeploymentRow | undefined> {
  const { db } = ctx;
  for (let attempt = 1; attempt <= 32; attempt++) {
    const [rows, protection, approved, rejected] = await db.batch([
      db.select().from(deployments).where(eq(deployments.id, deploymentId)),
      db
        .select({ lockedAt: environmentProtections.lockedAt })
        .from(environmentProtections)
        .where(
          eq(
            environmentProtections.environmentId,
            sql`(SELECT environment_id FROM deployments WHERE id = ${deploymentId})`,
          ),
        ),
      db
        .select({ n: sql<number>`count(*)`, latest: sql<string | null>`max(${deploymentReviews.createdAt})` })
        .from(deploymentReviews)
        .where(reviewsOf(deploymentId, "approved")),
      db
        .select({ accountId: deploymentReviews.accountId })
        .from(deploymentReviews)
        .where(rejectedReview(deploymentId))
        .limit(1),
    ]);
    const row = rows[0];
    if (row?.status !== "waiting" || !row.gate) return row;
    const rejecter = rejected[0]?.accountId;
    const recordedFailure = failedCheck(checksOf(row.gate));
    if (rejecter !== undefined || recordedFailure) {
      // A rejection or a failed check is recorded: it cancels (its own request, or the settling that
      // concluded it, does that at once; this is for one a crash cut short).
      const reason =
        rejecter !== undefined ? rejectionReason(rejecter) : failedCheckReason(recordedFailure as GateCheck);
      await cancelAsConsequence(ctx, row, reason);
      return db.select().from(deployments).where(eq(deployments.id, deploymentId)).get();
    }
    const nowMs = Date.now();
    // Later than the row's last write and than every approval it counts: its events follow theirs.
    const latest = approved[0]?.latest;
    const now = laterThan(latest && latest > row.updatedAt ? latest : row.updatedAt);
    const timed = timeOutChecks(checksOf(row.gate), row.checkDeadlines, nowMs, now);
    const approvals = Number(approved[0]?.n ?? 0);
    const locked = Boolean(protection[0]?.lockedAt);
    const failed = failedCheck(timed.checks);
    const blocked = blockedBy(row.gate, approvals, locked, nowMs, checksHold(timed.checks));
    const gate: DeploymentGate = { ...row.gate, approvals, blocked_by: blocked, checks: timed.checks };
    const asRead = { ...row.gate, checks: checksOf(row.gate) };
    if (blocked.length > 0 && JSON.stringify(gate) === JSON.stringify(asRead)) {
      await afterCommit(ctx, "wait timer", row.id, () => keepTimer(ctx, row));
      return row;
    }
    // What it decides at once is in its own write: the release, or the cancel of a check this step
    // concluded `failed` by its timeout, as a failed conclusion does (`decidedAtOnce`).
    const decided = decidedAtOnce(ctx, row, { ...row, gate, updatedAt: now }, now, {
      release: blocked.length === 0,
      failed,
    });
    const { next } = decided;
    // Never over a rejection recorded since the read (its cancel not yet written): read again,
    // which cancels. A check this step times out cannot then fail a deployment already rejected.
    const update = db
      .update(deployments)
      .set(decided.columns)
      .where(
        and(
          eq(deployments.id, row.id),
          eq(deployments.status, "waiting"),
          eq(deployments.updatedAt, row.updatedAt),
          decided.unlocked,
          sql`NOT EXISTS (SELECT 1 FROM ${deploymentReviews} WHERE ${rejectedReview(row.id)})`,
        ),
      );
    const events = settledEvents(ctx, next, timed.concluded, decided.release, now);
    const results = await db.batch([
      update,
      ...events.map((e) => e.insert),
      ...(decided.timeline ? [decided.timeline] : []),
    ]);
    if (!(results[0] as D1Result).meta.changes) continue; // changed, or locked meanwhile: again
    if (failed && !decided.cancel) {
      // A cancel that could not be part of the write: after it, its `deployment.check_concluded`
      // says what it decided (./gate-checks.ts `publishAsDecided`).
      let cancelled: DeploymentRecord | undefined;
      await afterCommit(ctx, "wait timer", next.id, async () => {
        cancelled = await cancelAsConsequence(ctx, next, failedCheckReason(failed));
      });
      await publishAsDecided(
        ctx,
        events.map(({ event }) => event.id),
        cancelled,
      );
      return db.select().from(deployments).where(eq(deployments.id, deploymentId)).get();
    }
    for (const { event } of events) publishAfterCommit(ctx, event.id);
    await decided.after(results[results.length - 1] as { seq: number }[]);
    if (next.status === "waiting") await afterCommit(ctx, "wait timer", next.id, () => keepTimer(ctx, next));
    return next;
  }
  return undefined;
}

/**
 * What a gate step decides at once, as part of its own batch (§26, §31): the release of a
 * deployment nothing holds any more (`waiting → queued`: a settling, the last check's pass) or the
 * cancel of one a check failed (by its conclusion or its timeout). `step` is the row as the step's
 * own change leaves it (its gate, its time `now`); `row`, as the step read it.
 *
 * - `next`: the row as the batch leaves it; `columns`: what its compare-and-set sets (a cancel's
 *   every column, `data` with its stacks; else the gate, the time, a release's status);
 * - `unlocked`: a release's added condition (not locked, so that a release racing a lock lands
 *   before it or sees it);
 * - `timeline`: its timeline entries, for the end of the batch (written only if the statement
 *   before them wrote one row, as each of the step's own does exactly when it applied);
 * - `after(numbered)`, once the batch committed: the followers told, a release's `supersede`.
 *
 * A cancel that cannot be planned (a deployment at its size bound) is not part of it (`cancel`
 * undefined): the step cancels after its write, as a consequence. The step writes its events
 * itself (./gate-checks.ts `settledEvents`, `deployment.released` included).
 */
export function decidedAtOnce(
  ctx: ServiceContext,
  row: DeploymentRow,
  step: DeploymentRow,
  now: string,
  decides: { release: boolean; failed?: GateCheck },
) {
  const cancel = decides.failed ? plannedCancel(step, now, failedCheckReason(decides.failed)) : undefined;
  const release = !cancel && decides.release;
  // The release a millisecond after the step's own change, so that every reader orders them so
  // (its `deployment.released` after the step's events, its timeline entry after the step's) and
  // the row's next change is later still (`laterThan`).
  const at = release ? new Date(Date.parse(now) + 1).toISOString() : now;
  const next: DeploymentRow = cancel?.next ?? (release ? { ...step, status: "queued", updatedAt: at } : step);
  const entries =
    cancel?.entries ?? (release ? [{ stackId: null, status: "queued" as const, statusReason: null }] : []);
  return {
    next,
    release,
    cancel: cancel !== undefined,
    columns: cancel
      ? transitionedColumns(next)
      : { gate: next.gate, updatedAt: at, ...(release ? { status: "queued" as const } : {}) },
    unlocked: release ? notLocked(row.environmentId) : undefined,
    timeline: entries.length ? statusEntriesInsert(ctx.db, row.id, entries, at, "if-changed") : undefined,
    after: async (numbered: readonly { seq: number }[]) => {
      if (!entries.length) return;
      notifyFollowers(ctx, row.id, recordedEntries(entries, numbered, at), toDeploymentRecord(next));
      if (release) await afterCommit(ctx, "supersede", next.id, () => supersedeOlder(ctx, next));
    },
  };
}

/** A deployment still waiting for its timer or a check's deadline has the environment's gate object hold it. */
async function keepTimer(ctx: ServiceContext, row: DeploymentRow): Promise<void> {
  const due = nextDue(row);
  if (due !== null) await scheduleGateTimer(ctx, row.environmentId, row.id, due, row.orgId);
}

/** The waiting deployments of an environment, settled (an unlock, a timer's environment). */
export async function settleEnvironment(ctx: ServiceContext, environmentId: string): Promise<void> {
  const waiting = await ctx.db
    .select({ id: deployments.id })
    .from(deployments)
    .where(and(eq(deployments.environmentId, environmentId), eq(deployments.status, "waiting")))
    .orderBy(deployments.createdAt, deployments.id)
    .all();
  for (const { id } of waiting) await settleGate(ctx, id);
}
