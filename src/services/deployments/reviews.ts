/**
 * Reviews of waiting deployments (API_CONTRACT §26, `reviewDeployment`, `listDeploymentReviews`).
 *
 * Reviewers are the project's members whose role is at least the protection's `reviewer_role`,
 * and org owners and admins (who act as project owners). One review per account: the table's key
 * refuses a second, so two reviews by one account at once record one. An approval that completes
 * the count releases the deployment in the same request (`settleGate`, a compare-and-set: two
 * approvals completing it together release it once); a rejection cancels it at once. Either, if it
 * fails after the review committed, is left to the cron (`reviewDeployment`).
 */
import { and, eq, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindCompiled, bindQuery, compiled, tableReader } from "../../db/compiled";
import { compiledKeyset, type Page, type PageRequest, pageValues } from "../../db/pagination";
import { deploymentReviews, deployments, environmentProtections, type ProjectRole } from "../../db/schema";
import { conflict, forbidden, isUniqueViolation } from "../../errors";
import { nowIso } from "../../lib/time";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { ReviewRecord } from "../../schemas/protection";
import type { ReviewInput } from "../../schemas/protection-writes";
import { authorizedLookup } from "../access";
import { auditEntry } from "../audit/entry";
import { contained } from "../contained";
import { guardedPage, lookupThen } from "../lookup";
import { environmentOfDeployment } from "./config";
import { settleGate } from "./gate";
import { currentRecord, gateEvent, ownSettling, publishAsDecided } from "./gate-checks";
import { rejectionReason } from "./gate-decide";
import { toDeploymentRecord } from "./record";
import { cancelAsConsequence } from "./transitions";

const RANK: Record<ProjectRole, number> = { viewer: 1, contributor: 2, owner: 3 };

const readProtection = tableReader(environmentProtections);

/** `reviewDeployment`: `200` the deployment as the review leaves it. */
export async function reviewDeployment(
  ctx: CallerContext,
  id: string,
  input: ReviewInput,
): Promise<DeploymentRecord> {
  const { db, identity } = ctx;
  const {
    found: { row, role },
    results: [protections],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, deployments, id, "read", "Deployment"),
    bindQuery(
      db,
      db
        .select()
        .from(environmentProtections)
        .where(eq(environmentProtections.environmentId, environmentOfDeployment(id))),
    ),
  );
  const protection = protections[0] ? readProtection(protections[0]) : undefined;
  const reviewerRole = protection?.reviewerRole ?? "owner";
  if (RANK[role] < RANK[reviewerRole]) {
    throw forbidden(
      `Reviewing a deployment of this environment needs the project role \`${reviewerRole}\` or above; you are \`${role}\`.`,
    );
  }
  if ((protection?.preventSelfReview ?? true) && row.createdBy === identity.accountId) {
    throw forbidden("The account that created the deployment may not review it (`prevent_self_review`).");
  }
  if (row.status !== "waiting" || !row.gate?.blocked_by.includes("approval")) throw notAwaitingApproval();
  const now = nowIso();
  // API_CONTRACT §31: `deployment.reviewed`, written with the review (after its entry, which is
  // written exactly when the review is), with the deployment as read; once what the review decides
  // has run, its `deployment` becomes the record the request answers (`publishAsDecided`, below).
  const review = {
    account_id: identity.accountId,
    state: input.state,
    comment: input.comment ?? null,
    created_at: now,
  };
  const reviewed = gateEvent(
    ctx,
    row.projectId,
    "deployment.reviewed",
    { deployment: toDeploymentRecord(row), review },
    "if-changed",
    now,
  );
  let inserted: { accountId: string }[];
  try {
    [inserted] = await db.batch([
      // Written only while the deployment still waits for approvals: a cancel may have come first,
      // or, an instant before, other approvals may have completed the count or a rejection decided
      // it (the release or the cancel not yet written), which leaves nothing to review. D1 runs the
      // statement alone, so of reviews sent at once exactly one outcome is recorded: the required
      // approvals (then a rejection answers 409) or one rejection (then every later review does).
      // Nor once a check has failed (§31: it cancels at once, as a rejection does), its cancel not
      // yet written: a review then is 409, as one after the cancel is.
      db
        .insert(deploymentReviews)
        .select(
          sql`SELECT ${id}, ${identity.accountId}, ${row.projectId}, ${input.state}, ${input.comment ?? null}, ${now} WHERE EXISTS (SELECT 1 FROM deployments WHERE id = ${id} AND status = 'waiting' AND EXISTS (SELECT 1 FROM json_each(gate, '$.blocked_by') WHERE value = 'approval') AND (SELECT count(*) FROM ${deploymentReviews} WHERE ${deploymentReviews.deploymentId} = ${id} AND ${deploymentReviews.state} = 'approved') < json_extract(gate, '$.required_approvals') AND NOT EXISTS (SELECT 1 FROM ${deploymentReviews} WHERE ${deploymentReviews.deploymentId} = ${id} AND ${deploymentReviews.state} = 'rejected') AND NOT EXISTS (SELECT 1 FROM json_each(gate, '$.checks') WHERE json_extract(value, '$.state') = 'failed'))`,
        )
        .returning({ accountId: deploymentReviews.accountId }),
      auditEntry(ctx, {
        target: { type: "deployment", id },
        projectId: row.projectId,
        changes: { review: { from: null, to: { state: input.state, comment: input.comment ?? null } } },
      }),
      reviewed.insert,
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) {
      await settleGate(ctx, id);
      throw conflict("You have already reviewed this deployment.");
    }
    throw err;
  }
  if (!inserted[0]) {
    // The reviews already decided it: what that decision does is done now if a crash lost it.
    await settleGate(ctx, id);
    throw notAwaitingApproval();
  }
  // The review has committed: what it decides (a release, a cancel) is its consequence. A failure
  // of it is logged and answered with the deployment as read before the review, never as a 5xx
  // (API_CONTRACT §11: a 5xx changed nothing; its retry would meet its own review, 409); the cron
  // carries the decision out a minute on (src/services/deployments/gate-sweeps.ts `settleOverdueGates`).
  const decided = await contained(
    ctx,
    "review committed; its release or cancel failed and is left to the cron",
    { deployment_id: id },
    async () => {
      if (input.state === "approved") {
        const settled = await settleGate(ctx, id);
        return {
          own: ownSettling(settled, row),
          now: settled ? toDeploymentRecord(settled) : await currentRecord(ctx, id),
        };
      }
      const own = await cancelAsConsequence(ctx, id, rejectionReason(identity.accountId));
      return { own, now: own ?? (await currentRecord(ctx, id)) };
    },
  );
  // Its event says what the review decided (./gate-checks.ts `publishAsDecided`); the answer is the
  // deployment as it is now, another request's change included.
  await publishAsDecided(ctx, [reviewed.event.id], decided?.own);
  return decided?.now ?? toDeploymentRecord(row);
}

const notAwaitingApproval = () =>
  conflict("The deployment is not `waiting` for approvals: there is nothing to review.", [
    { path: "state", message: "Only a waiting deployment held by `approval` can be reviewed." },
  ]);

const readReview = tableReader(deploymentReviews);

/** `listDeploymentReviews`: behind the deployment's lookup, in one round trip (§4 order by created_at). */
export function listDeploymentReviews(
  ctx: CallerContext,
  id: string,
  page: PageRequest,
): Promise<Page<ReviewRecord>> {
  const { db, identity } = ctx;
  const keys = compiledKeyset(
    { createdAt: deploymentReviews.createdAt, id: deploymentReviews.accountId },
    page,
  );
  const query = compiled(`deployment-reviews:${keys.variant}`, (b) =>
    b
      .select()
      .from(deploymentReviews)
      .where(and(eq(deploymentReviews.deploymentId, sql.placeholder("deploymentId")), keys.where))
      .orderBy(...keys.orderBy)
      .limit(keys.limit),
  );
  return guardedPage(
    db,
    authorizedLookup(db, identity, deployments, id, "read", "Deployment"),
    page,
    {
      statement: bindCompiled(db, query, { deploymentId: id, ...pageValues(page) }),
      read: (values) => {
        const r = readReview(values);
        return { ...r, id: r.accountId };
      },
    },
    (r) => ({ account_id: r.accountId, state: r.state, comment: r.comment, created_at: r.createdAt }),
  );
}
