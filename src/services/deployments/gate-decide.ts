/**
 * What a step of a gate decides (API_CONTRACT §26, §31), shared by the settling (./gate.ts) and a
 * check's conclusion (./checks.ts): what a settling reads (`gateFacts`), what holds a waiting
 * deployment, the lock as read, a step's time, and what it decides at once in its own write (a
 * release, or a failed check's cancel).
 */
import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import {
  type DeploymentGate,
  deploymentReviews,
  deployments,
  environmentProtections,
  type GateCheck,
} from "../../db/schema";
import { environmentOfDeployment } from "./config";
import { afterCommit, supersedeOlder } from "./gate-after";
import { failedCheckReason } from "./gate-checks";
import { notSuperseded, owesCancelTo } from "./gate-rules";
import { type DeploymentRow, toDeploymentRecord } from "./record";
import { notifyFollowers, recordedEntries, statusEntriesInsert } from "./timeline";
import { plannedCancel, transitionedColumns } from "./transition-plan";

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

export const rejectedReview = (deploymentId: string) => reviewsOf(deploymentId, "rejected");

/** The timeline's reason for a deployment a review rejected. */
export const rejectionReason = (accountId: string) => `Rejected by account ${accountId}.`;

const isLocked = (environmentId: string) =>
  sql`EXISTS (SELECT 1 FROM environment_protections WHERE environment_id = ${environmentId} AND locked_at IS NOT NULL)`;
export const notLocked = (environmentId: string) => sql`NOT ${isLocked(environmentId)}`;

/** SQL true while the environment is still locked as read (`locked`) or still unlocked as read. */
export const lockStillAsRead = (environmentId: string, locked: boolean) =>
  locked ? isLocked(environmentId) : notLocked(environmentId);

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
    unchanged: lockStillAsRead(environmentId, locked),
  };
}

/**
 * What a settling reads of a deployment (./gate.ts), in one batch: its row, its environment's lock
 * and policy, its reviews, and the newest deployment that owes it a cancel under `supersede`.
 */
export const gateFacts = (db: ServiceContext["db"], deploymentId: string) =>
  [
    db.select().from(deployments).where(eq(deployments.id, deploymentId)),
    db
      .select({ lockedAt: environmentProtections.lockedAt, concurrency: environmentProtections.concurrency })
      .from(environmentProtections)
      .where(eq(environmentProtections.environmentId, environmentOfDeployment(deploymentId))),
    db
      .select({ n: sql<number>`count(*)`, latest: sql<string | null>`max(${deploymentReviews.createdAt})` })
      .from(deploymentReviews)
      .where(reviewsOf(deploymentId, "approved")),
    db
      .select({ accountId: deploymentReviews.accountId })
      .from(deploymentReviews)
      .where(rejectedReview(deploymentId))
      .limit(1),
    // The newest deployment that owes it a cancel under `supersede` (./gate-rules.ts `owesCancel`),
    // found among the environment's deployments created since it.
    db
      .select({ id: deployments.id })
      .from(deployments)
      .where(
        and(
          eq(deployments.environmentId, environmentOfDeployment(deploymentId)),
          gte(deployments.createdAt, sql`(SELECT created_at FROM deployments WHERE id = ${deploymentId})`),
          owesCancelTo(deploymentId),
        ),
      )
      .orderBy(desc(deployments.createdAt), desc(deployments.id))
      .limit(1),
  ] as const;

export type GateFacts = [
  DeploymentRow[],
  { lockedAt: string | null; concurrency: string | null }[],
  { n: number; latest: string | null }[],
  { accountId: string }[],
  { id: string }[],
];

/** How many statements `gateFacts` reads. */
export const FACTS = 5;

/** Strictly later than `previous`: every write gives the row a new version (as transitions do). */
export function laterThan(previous: string): string {
  const now = Date.now();
  const prev = Date.parse(previous);
  return new Date(Number.isNaN(prev) || now > prev ? now : prev + 1).toISOString();
}

/**
 * What a gate step decides at once, as part of its own batch (§26, §31): the release of a
 * deployment nothing holds any more (`waiting → queued`: a settling, the last check's pass) or the
 * cancel of one a check failed (by its conclusion or its timeout). `step` is the row as the step's
 * own change leaves it (its gate, its time `now`); `row`, as the step read it.
 *
 * - `next`: the row as the batch leaves it; `columns`: what its compare-and-set sets (a cancel's
 *   every column, `data` with its stacks; else the gate, the time, a release's status);
 * - `releasable`: a release's added condition: not locked, so that a release racing a lock lands
 *   before it or sees it; and not superseded (./gate-rules.ts `notSuperseded`), so that a release
 *   racing a newer deployment's entry into `queued` under `supersede` never queues beside it;
 * - `timeline`: its timeline entries, for the end of the batch (written only if the statement
 *   before them wrote one row, as each of the step's own does exactly when it applied);
 * - `after(numbered)`, once the batch committed: the followers told, a release's `supersede`
 *   (which reads the policy then; unless `supersede` is false: ./gate.ts `settleGates` reads it
 *   once for the releases it wrote together).
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
    releasable: release ? and(notLocked(row.environmentId), notSuperseded(row)) : undefined,
    timeline: entries.length ? statusEntriesInsert(ctx.db, row.id, entries, at, "if-changed") : undefined,
    after: async (numbered: readonly { seq: number }[], supersede = true) => {
      if (!entries.length) return;
      notifyFollowers(ctx, row.id, recordedEntries(entries, numbered, at), toDeploymentRecord(next));
      if (release && supersede) await afterCommit(ctx, "supersede", next.id, () => supersedeOlder(ctx, next));
    },
  };
}
