/**
 * `concludeCheck` (API_CONTRACT §31): a deployment check concluded by the system that ran it.
 *
 * Checks are machines: any account with the project role `contributor` may conclude them, the one
 * that created the deployment included. The conclusion is a compare-and-set on the deployment as
 * read, with its audit entry and `deployment.check_concluded` in the same batch: of two conclusions
 * of one check at once (or a conclusion racing the check's timeout) exactly one is recorded, and
 * the other finds it concluded (`409`). What it decides at once is part of that same batch, and of
 * its audit entry: a failure cancels the deployment (every stack, the timeline's entries), the last
 * pass releases it when nothing else holds it (status `queued`, its timeline entry and
 * `deployment.released`). After any other pass the gate is settled again (./gate.ts `settleGate`:
 * another check's deadline or the timer may be due), a consequence; a crash before it is the
 * cron's to finish.
 */
import { and, eq, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { deploymentReviews, deployments, type GateCheck } from "../../db/schema";
import { ApiError, conflict } from "../../errors";
import type { DeploymentRecord } from "../../schemas/deployment";
import { type CheckConclusionInput, httpsUrl } from "../../schemas/protection-writes";
import type { UrlCheck } from "../../webhooks/url-guard";
import { loadAuthorized } from "../access";
import { auditEntry } from "../audit/entry";
import { contained } from "../contained";
import { publishAfterCommit } from "../events/queue";
import { backOff, retries } from "../preconditions";
import { storedUrl } from "../stored-url";
import { settleGate } from "./gate";
import {
  checksHold,
  checksOf,
  currentRecord,
  failedCheckReason,
  publishAsDecided,
  settledEvents,
} from "./gate-checks";
import { blockedBy, decidedAtOnce, laterThan, lockAsRead, reviewsOf } from "./gate-decide";
import { auditableDeploymentChanges, type DeploymentRow, toDeploymentRecord } from "./record";
import { cancelAsConsequence } from "./transitions";

/** A check's `details_url` as its body's schema takes it (`httpsUrl`), parsed once. */
const detailsUrlRule = (raw: string): UrlCheck => {
  const url = httpsUrl(raw);
  return url ? { ok: true, url } : { ok: false, reason: "Must be an https:// URL." };
};

const noSuchCheck = (name: string) =>
  new ApiError("not_found", `The deployment's gate holds no check named "${name}".`);

const timedOut = (name: string) =>
  conflict(`The check "${name}" timed out: it concludes by itself, as its \`on_timeout\` says.`, [
    { path: "name", message: "Timed out." },
  ]);

/** When the check `name` of the deployment concludes by itself (its deadline), in ms; never without one. */
const deadlineOf = (row: Pick<DeploymentRow, "checkDeadlines">, name: string) => {
  const at = row.checkDeadlines?.find((d) => d.name === name)?.at;
  return at === undefined ? Number.POSITIVE_INFINITY : Date.parse(at);
};

export async function concludeCheck(
  ctx: CallerContext,
  id: string,
  name: string,
  input: CheckConclusionInput,
): Promise<DeploymentRecord> {
  // Stored in the deployment's gate, as sent, and shown to every reader: no credentials (§33).
  if (input.details_url !== undefined) {
    storedUrl("details_url", input.details_url, detailsUrlRule, "The details URL is not allowed.");
  }
  const { db, identity } = ctx;
  let { row } = await loadAuthorized(db, identity, deployments, id, "write", "Deployment");
  const again = retries();
  let settledLate = false;
  for (let attempt = 1; ; attempt++) {
    const checks = checksOf(row.gate);
    const check = checks.find((c) => c.name === name);
    if (!check) throw noSuchCheck(name);
    if (row.status !== "waiting") {
      throw conflict(`The deployment is \`${row.status}\`, no longer \`waiting\`: its checks are closed.`);
    }
    if (check.state !== "pending") {
      throw conflict(`The check "${name}" already concluded \`${check.state}\`.`, [
        { path: "name", message: "Already concluded." },
      ]);
    }
    // The lock as read (see below), before the step's time: its entries and events carry a time
    // as close to its commit as the step can know.
    const lock = await lockAsRead(ctx, row.environmentId);
    const now = laterThan(row.updatedAt);
    // Past its deadline the check concluded by itself (§31), however late its timer: settled here
    // (its `on_timeout`, reason `timeout`), it answers 409 as concluded, and a conclusion recorded
    // by a request is always from before its deadline.
    if (deadlineOf(row, name) <= Date.parse(now)) {
      if (settledLate) throw timedOut(name);
      settledLate = true;
      row = (await settleGate(ctx, id)) ?? row;
      continue;
    }
    const concluded: GateCheck = {
      ...check,
      state: input.conclusion,
      reason: null,
      details_url: input.details_url ?? null,
      summary: input.summary ?? null,
      concluded_at: now,
    };
    const held = row.gate as NonNullable<DeploymentRow["gate"]>;
    const nowChecks = checks.map((c) => (c.name === name ? concluded : c));
    // What holds it once this conclusion is in, from the facts as they are now (§26 order): the
    // approvals the gate counts (the compare-and-set holds the count to it), the clock, the lock
    // as read (a lock or unlock since fails the compare-and-set, and the next attempt reads it
    // again), the checks. The last pass takes `check` out and releases it when nothing is left.
    const blocked = blockedBy(held, held.approvals, lock.locked, Date.now(), checksHold(nowChecks));
    // A failure cancels the deployment at once (every stack, §31), the last pass releases it when
    // nothing else holds it: in this same write (./gate.ts `decidedAtOnce`).
    const decided = decidedAtOnce(
      ctx,
      row,
      { ...row, gate: { ...held, blocked_by: blocked, checks: nowChecks }, updatedAt: now },
      now,
      { release: blocked.length === 0, failed: input.conclusion === "failed" ? concluded : undefined },
    );
    const { next } = decided;
    // `deployment.check_concluded`, and `deployment.released` with it when this step releases.
    const events = settledEvents(ctx, next, [concluded], decided.release, now);
    const results = await db.batch([
      db
        .update(deployments)
        .set(decided.columns)
        .where(
          and(
            eq(deployments.id, id),
            eq(deployments.status, "waiting"),
            eq(deployments.updatedAt, row.updatedAt),
            // Nothing decided or counted since the read that the row does not show yet: a rejection
            // (it cancels at once, §26: this check is then 409), an approval not yet in the gate.
            sql`NOT EXISTS (SELECT 1 FROM ${deploymentReviews} WHERE ${reviewsOf(id, "rejected")})`,
            sql`(SELECT count(*) FROM ${deploymentReviews} WHERE ${reviewsOf(id, "approved")}) = json_extract(${deployments.gate}, '$.approvals')`,
            lock.unchanged,
            // A release: not superseded since the read either (./gate-rules.ts `notSuperseded`).
            decided.releasable,
          ),
        )
        .returning({ id: deployments.id }),
      auditEntry(ctx, {
        target: { type: "deployment", id },
        projectId: row.projectId,
        // The record's top-level fields that the conclusion changes (§14): its gate and updated_at,
        // and its status (and finished_at) when it releases or cancels.
        changes: auditableDeploymentChanges(toDeploymentRecord(row), toDeploymentRecord(next)),
      }),
      ...events.map((e) => e.insert),
      ...(decided.timeline ? [decided.timeline] : []),
    ]);
    if ((results[0] as { id: string }[])[0]) {
      const eventIds = events.map((e) => e.event.id);
      if (!decided.release && !decided.cancel) return decide(ctx, next, concluded, eventIds);
      for (const eventId of eventIds) publishAfterCommit(ctx, eventId);
      await decided.after(results[results.length - 1] as { seq: number }[]);
      return toDeploymentRecord(next);
    }
    // Changed since it was read (another conclusion, a review, its timeout, a cancel): read it again,
    // settled (./gate.ts `settleGate`): a rejection's cancel carried out, approvals counted, so
    // the next attempt meets the deployment as those decided it.
    if (!again(attempt)) throw conflict("The deployment kept changing; try again.");
    await backOff(attempt);
    const fresh =
      (await settleGate(ctx, id)) ??
      (await db.select().from(deployments).where(eq(deployments.id, id)).get());
    if (!fresh) throw new ApiError("not_found", "Deployment not found.");
    row = fresh;
  }
}

/**
 * What follows a conclusion's write when it neither released nor cancelled there: a failure whose
 * cancel could not be part of the write (./gate.ts `decidedAtOnce`) cancels now, its own
 * consequence, which its event then says; after a pass the gate is settled again, for what other
 * steps decide (another check's deadline or the timer due, an approval or a lock since the write):
 * the pass decided from the facts at its write, so its event keeps the record that write left. A
 * failure of this is logged, and the deployment answered as the conclusion left it (never a 5xx:
 * the conclusion committed); the cron's sweep finishes it (./gate-sweeps.ts).
 */
async function decide(
  ctx: CallerContext,
  next: DeploymentRow,
  concluded: GateCheck,
  eventIds: readonly string[],
): Promise<DeploymentRecord> {
  const decided = await contained(
    ctx,
    "check concluded; its cancel or release failed and is left to the cron",
    { deployment_id: next.id },
    async () => {
      if (concluded.state === "failed") {
        const own = await cancelAsConsequence(ctx, next, failedCheckReason(concluded));
        return { own, now: own ?? (await currentRecord(ctx, next.id)) };
      }
      const settled = await settleGate(ctx, next.id);
      return {
        own: undefined,
        now: settled ? toDeploymentRecord(settled) : await currentRecord(ctx, next.id),
      };
    },
  );
  // Its `deployment.check_concluded` says what the conclusion decided (./gate-checks.ts
  // `publishAsDecided`); the answer is the deployment as it is now, another request's change included.
  await publishAsDecided(ctx, eventIds, decided?.own);
  return decided?.now ?? toDeploymentRecord(next);
}
