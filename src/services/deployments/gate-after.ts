/**
 * What follows a gate's committed write (API_CONTRACT §26), never part of it: a timer handed to the
 * environment's gate object, the `supersede` of older deployments when one enters `queued`. A
 * failure of it is logged and never becomes the request's answer (`afterCommit`); the cron's
 * sweep (./gate-sweeps.ts) does what it left undone.
 */
import { and, eq, inArray, lt, or } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { deployments, environmentProtections } from "../../db/schema";
import type { DeploymentRecord } from "../../schemas/deployment";
import { contained } from "../contained";
import { nextDue } from "./gate-checks";
import { scheduleGateTimer } from "./gate-timer";
import type { DeploymentRow } from "./record";
import { cancelAsConsequence } from "./transitions";

/**
 * Runs `work`, a consequence of a write that has committed (this request's or, for a gate settled
 * again, an earlier one's); a failure of it is logged, not thrown.
 * What it leaves undone is done later by the cron (./gate-sweeps.ts): a wait timer not handed to
 * the gate object a minute after `wait_until`, a `supersede` cut short a minute on (or by the next
 * deployment of the environment to enter `queued`, whichever comes first).
 */
export async function afterCommit(
  ctx: ServiceContext,
  what: "wait timer" | "supersede",
  deploymentId: string,
  work: () => Promise<void>,
): Promise<void> {
  await contained(
    ctx,
    `a deployment's ${what} failed after the write; left to its backstop`,
    {
      deployment_id: deploymentId,
    },
    work,
  );
}

/** After a create: a waiting deployment's timer is set; a queued one supersedes older ones. */
export async function afterCreate(
  ctx: ServiceContext,
  record: DeploymentRecord,
  checkDeadlines: DeploymentRow["checkDeadlines"],
  concurrency: string | null,
  orgId: string | null,
) {
  const row = { environmentId: record.environment_id, id: record.id, createdAt: record.created_at, orgId };
  const due = nextDue({ status: record.status, gate: record.gate, checkDeadlines });
  if (due !== null) {
    await afterCommit(ctx, "wait timer", row.id, () =>
      scheduleGateTimer(ctx, row.environmentId, row.id, due, row.orgId),
    );
  }
  if (record.status === "queued" && concurrency === "supersede") {
    await afterCommit(ctx, "supersede", row.id, () => supersedeOlder(ctx, row));
  }
}

/** The timeline's reason for a deployment a newer one superseded (§26). */
export const supersededBy = (newerId: string) => `Superseded by deployment ${newerId}.`;

/** Whether the environment's concurrency policy is `supersede` now. */
export async function supersedes(ctx: ServiceContext, environmentId: string): Promise<boolean> {
  const policy = await ctx.db
    .select({ concurrency: environmentProtections.concurrency })
    .from(environmentProtections)
    .where(eq(environmentProtections.environmentId, environmentId))
    .get();
  return policy?.concurrency === "supersede";
}

/**
 * `supersede` (§26): when a deployment enters `queued`, every older deployment of its environment
 * still `queued` or `waiting` is cancelled, its timeline entry's reason naming the newer one.
 * Each cancel is the transitions' own compare-and-set, so one racing a release or an engine move
 * ends in one state (a deployment the engine started first runs on).
 */
export async function supersedeOlder(
  ctx: ServiceContext,
  newer: { id: string; environmentId: string; createdAt: string },
): Promise<void> {
  const { db } = ctx;
  if (!(await supersedes(ctx, newer.environmentId))) return;
  const older = await db
    .select()
    .from(deployments)
    .where(
      and(
        eq(deployments.environmentId, newer.environmentId),
        inArray(deployments.status, ["queued", "waiting"]),
        or(
          lt(deployments.createdAt, newer.createdAt),
          and(eq(deployments.createdAt, newer.createdAt), lt(deployments.id, newer.id)),
        ),
      ),
    )
    .all();
  for (const row of older) await cancelAsConsequence(ctx, row, supersededBy(newer.id));
}
