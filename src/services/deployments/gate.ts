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
import type { BatchItem } from "drizzle-orm/batch";
import type { ServiceContext } from "../../context";
import { type DeploymentGate, deploymentReviews, deployments, environmentProtections } from "../../db/schema";
import { loggableError } from "../../errors";
import type { DeploymentRecord } from "../../schemas/deployment";
import { publishAfterCommit } from "../events/queue";
import { afterCommit, supersededBy, supersedeOlder, supersedes } from "./gate-after";
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
import {
  blockedBy,
  decidedAtOnce,
  FACTS,
  type GateFacts,
  gateFacts,
  laterThan,
  lockStillAsRead,
  rejectedReview,
  rejectionReason,
} from "./gate-decide";
import { scheduleGateTimer } from "./gate-timer";
import type { DeploymentRow } from "./record";
import { cancelAsConsequence } from "./transitions";

/**
 * What a settling does with what it read: nothing to a deployment not waiting (`as-is`); a
 * recorded rejection or failed check cancels (`cancel`, its own request or the settling that
 * concluded it does that at once: this is for one a crash cut short), as a newer deployment that
 * owes it a cancel under `supersede` does (./gate-rules.ts `owesCancel`: its supersede has not run
 * yet, and it is never released beside it); a gate still held as it was keeps its timer (`held`); else its `write` (a compare-and-set, then its events and timeline),
 * and `finish` once that committed. `together`: written in one batch with others (`settleGates`),
 * its compare-and-set also requires the environment's policy not to be `supersede`.
 */
function settlingStep(
  ctx: ServiceContext,
  [rows, protection, approved, rejected, superseding]: GateFacts,
  together = false,
) {
  const row = rows[0];
  if (row?.status !== "waiting" || !row.gate) return { kind: "as-is", row } as const;
  const rejecter = rejected[0]?.accountId;
  const recordedFailure = failedCheck(checksOf(row.gate));
  const newer = superseding[0]?.id;
  if (rejecter !== undefined || recordedFailure || newer !== undefined) {
    const reason =
      rejecter !== undefined
        ? rejectionReason(rejecter)
        : recordedFailure
          ? failedCheckReason(recordedFailure)
          : supersededBy(newer as string);
    return { kind: "cancel", row, reason } as const;
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
  if (blocked.length > 0 && JSON.stringify(gate) === JSON.stringify(asRead))
    return { kind: "held", row } as const;
  // What it decides at once is in its own write: the release, or the cancel of a check this step
  // concluded `failed` by its timeout, as a failed conclusion does (`decidedAtOnce`).
  const decided = decidedAtOnce(ctx, row, { ...row, gate, updatedAt: now }, now, {
    release: blocked.length === 0,
    failed,
  });
  const { next } = decided;
  const { db } = ctx;
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
        decided.releasable,
        // The lock as read, which its `blocked_by` is computed from: an unlock then a new lock since
        // the read (a lock marks only the deployments whose `blocked_by` lacks "lock") fail it.
        lockStillAsRead(row.environmentId, locked),
        sql`NOT EXISTS (SELECT 1 FROM ${deploymentReviews} WHERE ${rejectedReview(row.id)})`,
        // Written together, still not `supersede` (./gate.ts `settleGates`): else settled alone.
        together
          ? sql`NOT EXISTS (SELECT 1 FROM ${environmentProtections} WHERE ${environmentProtections.environmentId} = ${row.environmentId} AND ${environmentProtections.concurrency} = 'supersede')`
          : undefined,
      ),
    );
  const events = settledEvents(ctx, next, timed.concluded, decided.release, now);
  const write = [update, ...events.map((e) => e.insert), ...(decided.timeline ? [decided.timeline] : [])];
  const finish = async (results: unknown[], supersede = true): Promise<DeploymentRow | undefined> => {
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
      return db.select().from(deployments).where(eq(deployments.id, row.id)).get();
    }
    for (const { event } of events) publishAfterCommit(ctx, event.id);
    await decided.after(results[results.length - 1] as { seq: number }[], supersede);
    if (next.status === "waiting") await afterCommit(ctx, "wait timer", next.id, () => keepTimer(ctx, next));
    return next;
  };
  return { kind: "write", row, write, finish, released: decided.release ? next : undefined } as const;
}

type Step = ReturnType<typeof settlingStep>;

/** Whether a step's write applied: its compare-and-set changed its row (else it was changed, or locked, meanwhile). */
const applied = (results: readonly unknown[]) => Boolean((results[0] as D1Result).meta.changes);

/** A step that writes nothing, carried out: a held gate keeps its timer. */
async function unwritten(ctx: ServiceContext, step: Step & { kind: "as-is" | "held" }) {
  if (step.kind === "held") await afterCommit(ctx, "wait timer", step.row.id, () => keepTimer(ctx, step.row));
  return step.row;
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
    const step = settlingStep(ctx, (await db.batch(gateFacts(db, deploymentId))) as GateFacts);
    if (step.kind === "cancel") {
      await cancelAsConsequence(ctx, step.row, step.reason);
      return db.select().from(deployments).where(eq(deployments.id, deploymentId)).get();
    }
    if (step.kind !== "write") return unwritten(ctx, step);
    const results = await db.batch(step.write as unknown as [BatchItem<"sqlite">]);
    if (applied(results)) return step.finish(results);
  }
  return undefined;
}

/** How many deployments' settlings share one read and one write (`settleGates`). */
const SETTLED_TOGETHER = 20;

/**
 * The deployments `deploymentIds` of one environment settled in their order, as `settleGate` does
 * one by one, with SETTLED_TOGETHER of them read in one batch and written in another: one after
 * the other, 400 checks timing out together in one environment concluded up to 9 s after their
 * deadline (§31 allows 5), and their round trips held up every settling of their database. Each
 * step's compare-and-set and the statements written only if it applied are together and in order
 * in the batch, so each applies or not as alone. Settled alone afterwards, in its turn: a step that
 * must cancel, one whose compare-and-set lost to a change since the read, and every one of a batch
 * that failed or that `supersede` holds (a release there cancels the older deployments, which one
 * read for all would release beside it; each compare-and-set also says "not `supersede`", for a
 * policy changed between the read and the write). What follows a write (events published,
 * followers told) runs in their order once the batch committed, and `supersede` as settleGate
 * applies it: by the policy after the commit, read once for the releases. `settled` is told of each one done; the
 * first failure is thrown at the end, after the others were settled.
 */
export async function settleGates(
  ctx: ServiceContext,
  deploymentIds: readonly string[],
  settled: (deploymentId: string) => void = () => {},
): Promise<void> {
  const { db } = ctx;
  let failure: unknown;
  for (let from = 0; from < deploymentIds.length; from += SETTLED_TOGETHER) {
    const ids = deploymentIds.slice(from, from + SETTLED_TOGETHER);
    const together = await (async () => {
      const read = (await db.batch(
        ids.flatMap((id) => gateFacts(db, id)) as unknown as [BatchItem<"sqlite">],
      )) as unknown[];
      const facts = ids.map((_, i) => read.slice(FACTS * i, FACTS * (i + 1)) as GateFacts);
      if (facts.some(([, protection]) => protection[0]?.concurrency === "supersede")) return undefined;
      const steps = facts.map((read) => settlingStep(ctx, read, true));
      const writes = steps.flatMap((step) => (step.kind === "write" ? step.write : []));
      const written: unknown[] = writes.length
        ? await db.batch(writes as unknown as [BatchItem<"sqlite">])
        : [];
      let at = 0;
      return steps.map((step) => {
        const width = step.kind === "write" ? step.write.length : 0;
        at += width;
        return { step, results: written.slice(at - width, at) };
      });
    })().catch((err) => {
      ctx.log.warn("gate settling together failed; each settled alone", { error: loggableError(err) });
      return undefined;
    });
    const first = together?.find(
      ({ step, results }) => step.kind === "write" && step.released && applied(results),
    );
    const release = first?.step.kind === "write" ? first.step.released : undefined;
    let supersede = false;
    if (release) {
      await afterCommit(ctx, "supersede", release.id, async () => {
        supersede = await supersedes(ctx, release.environmentId);
      });
    }
    for (const [i, id] of ids.entries()) {
      const { step, results } = together?.[i] ?? {};
      try {
        if (step?.kind === "as-is" || step?.kind === "held") await unwritten(ctx, step);
        else if (step?.kind === "write" && results && applied(results)) {
          const next = step.released;
          await step.finish(results, false);
          if (supersede && next) await afterCommit(ctx, "supersede", id, () => supersedeOlder(ctx, next));
        } else await settleGate(ctx, id);
        settled(id);
      } catch (err) {
        failure ??= err;
      }
    }
  }
  if (failure !== undefined) throw failure;
}

/** A deployment still waiting for its timer or a check's deadline has the environment's gate object hold it. */
async function keepTimer(ctx: ServiceContext, row: DeploymentRow): Promise<void> {
  const due = nextDue(row);
  if (due !== null) await scheduleGateTimer(ctx, row.environmentId, row.id, due, row.orgId);
}

/** The waiting deployments of an environment, settled (an unlock). */
export async function settleEnvironment(ctx: ServiceContext, environmentId: string): Promise<void> {
  const waiting = await ctx.db
    .select({ id: deployments.id })
    .from(deployments)
    .where(and(eq(deployments.environmentId, environmentId), eq(deployments.status, "waiting")))
    .orderBy(deployments.createdAt, deployments.id)
    .all();
  await settleGates(
    ctx,
    waiting.map(({ id }) => id),
  );
}
