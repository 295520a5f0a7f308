/**
 * The cron's backstops for gates (API_CONTRACT §26): what a deployment's own requests and its gate
 * object did not finish, because a failure or a crash cut them short after a commit, settled a
 * minute on (./gate.ts does the settling). Each item is contained: one that fails holds up neither
 * the rest nor the cron's other sweeps.
 */
import { and, eq, inArray, or, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { notMoving } from "../../db/moving";
import { deployments, environmentProtections } from "../../db/schema";
import { contained } from "../contained";
import { settleGate } from "./gate";
import { supersededBy, supersedes } from "./gate-after";
import { owedCancelBy } from "./gate-rules";
import { cancelAsConsequence } from "./transitions";

/** At most this many waiting deployments are settled per database and cron run. */
export const OVERDUE_SWEEP_LIMIT = 100;

/**
 * The cron's backstop for gates (the gate object's alarm and the review's own request are the
 * way; this catches what a lost scheduling or a crash cut short, say the isolate died between a
 * create's commit and its call to the object, or between a review's commit and its release or
 * cancel, or an unlock's commit and its releases): waiting deployments whose `wait_until` passed
 * over a minute ago while still held by the timer, whose reviews decided over a minute ago (a
 * rejection, or the required approvals while still held by `approval`), or whose `approvals` does
 * not count an approval over a minute old (one that left it waiting), still held by a `lock`
 * their environment's protection let go of over a minute ago, or whose checks (§31) decided over a
 * minute ago or are pending a minute past their deadline, settled. One indexed read
 * (`status = 'waiting'`) per run, which finds nothing while nothing waits; and `supersedeOverdue`.
 */
const heldBy = (what: "wait_timer" | "approval" | "lock" | "check") =>
  sql`EXISTS (SELECT 1 FROM json_each(${deployments.gate}, '$.blocked_by') WHERE value = ${what})`;

export async function settleOverdueGates(ctx: ServiceContext): Promise<number> {
  const cutoff = new Date(Date.now() - 60_000).toISOString();
  const overdue = await ctx.db
    .select({ id: deployments.id })
    .from(deployments)
    .where(
      and(
        eq(deployments.status, "waiting"),
        notMoving(sql.raw("deployments.org_id")),
        or(
          and(sql`json_extract(${deployments.gate}, '$.wait_until') <= ${cutoff}`, heldBy("wait_timer")),
          sql`EXISTS (SELECT 1 FROM deployment_reviews r WHERE r.deployment_id = ${deployments.id} AND r.state = 'rejected' AND r.created_at <= ${cutoff})`,
          and(
            heldBy("approval"),
            sql`(SELECT count(*) FROM deployment_reviews r WHERE r.deployment_id = ${deployments.id} AND r.state = 'approved' AND r.created_at <= ${cutoff}) >= json_extract(${deployments.gate}, '$.required_approvals')`,
          ),
          // An approval over a minute old that its gate does not count yet (one that left it
          // waiting, its settling cut short): `approvals` is the count of distinct approvers (§26).
          sql`(SELECT count(*) FROM deployment_reviews r WHERE r.deployment_id = ${deployments.id} AND r.state = 'approved' AND r.created_at <= ${cutoff}) > json_extract(${deployments.gate}, '$.approvals')`,
          and(
            heldBy("lock"),
            sql`NOT EXISTS (SELECT 1 FROM environment_protections p WHERE p.environment_id = ${deployments.environmentId} AND (p.locked_at IS NOT NULL OR p.updated_at > ${cutoff}))`,
          ),
          // §31: a check concluded over a minute ago whose consequence is missing (a failure's
          // cancel, or the last pass's release), or a check still pending a minute past its deadline.
          and(
            sql`${deployments.updatedAt} <= ${cutoff}`,
            or(
              sql`EXISTS (SELECT 1 FROM json_each(${deployments.gate}, '$.checks') WHERE json_extract(value, '$.state') = 'failed')`,
              and(
                heldBy("check"),
                sql`NOT EXISTS (SELECT 1 FROM json_each(${deployments.gate}, '$.checks') WHERE json_extract(value, '$.state') != 'passed')`,
              ),
            ),
          ),
          sql`EXISTS (SELECT 1 FROM json_each(${deployments.checkDeadlines}) AS d, json_each(${deployments.gate}, '$.checks') AS c WHERE json_extract(d.value, '$.at') <= ${cutoff} AND json_extract(c.value, '$.name') = json_extract(d.value, '$.name') AND json_extract(c.value, '$.state') = 'pending')`,
        ),
      ),
    )
    .limit(OVERDUE_SWEEP_LIMIT)
    .all();
  for (const { id } of overdue) await sweepOne(ctx, "settle", id, () => settleGate(ctx, id));
  return overdue.length + (await supersedeOverdue(ctx, cutoff));
}

/** One item of a cron sweep: its failure is logged, and holds up neither the rest nor the run. */
async function sweepOne(
  ctx: ServiceContext,
  what: string,
  deploymentId: string,
  work: () => Promise<unknown>,
) {
  await contained(
    ctx,
    `gate sweep: ${what} failed; the next run tries again`,
    { deployment_id: deploymentId },
    work,
  );
}

/**
 * The cron's backstop for `supersede` (a create's or a release's cancels that a failure or a crash
 * cut short): a deployment still queued or waiting in an environment that supersedes, which a
 * newer one owes a cancel (./gate-rules.ts `owesCancel`: it entered `queued` since the policy
 * became `supersede`, whatever it is now) that entered `queued` before `cutoff`, is cancelled as
 * that entry would have, naming the newest such. The policy is read again before the cancels of
 * each environment (once per run), each of which is the transitions' compare-and-set.
 */
async function supersedeOverdue(ctx: ServiceContext, cutoff: string): Promise<number> {
  const newer = owedCancelBy(cutoff);
  const owed = await ctx.db
    .select({ id: deployments.id, environmentId: deployments.environmentId, newer })
    .from(deployments)
    .innerJoin(environmentProtections, eq(environmentProtections.environmentId, deployments.environmentId))
    .where(
      and(
        inArray(deployments.status, ["queued", "waiting"]),
        notMoving(sql.raw("deployments.org_id")),
        eq(environmentProtections.concurrency, "supersede"),
        sql`${newer} IS NOT NULL`,
      ),
    )
    .orderBy(deployments.createdAt, deployments.id)
    .limit(OVERDUE_SWEEP_LIMIT)
    .all();
  const policies = new Map<string, Promise<boolean>>();
  const stillSupersedes = (environmentId: string) => {
    const read = policies.get(environmentId) ?? supersedes(ctx, environmentId);
    policies.set(environmentId, read);
    return read;
  };
  for (const { id, environmentId, newer: by } of owed) {
    await sweepOne(ctx, "supersede", id, async () => {
      if (by !== null && (await stillSupersedes(environmentId))) {
        await cancelAsConsequence(ctx, id, supersededBy(by));
      }
    });
  }
  return owed.length;
}
