/**
 * A review's decision outlives a crash (API_CONTRACT §26; the product's rule that a crash never
 * loses an acknowledged write): a review is committed first and its consequence (the cancel of a
 * rejection, the release by the last approval) follows in the same request, so a crash between
 * them leaves a waiting deployment whose reviews already decided it. The state such a crash leaves
 * is written here directly in D1; then the next review of it, or the cron a minute later, carries
 * the decision out, and no review is recorded after it.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { interceptStatements, once } from "../helpers/api";
import { overdueSettled, runCron, SWEEP_CRON } from "../helpers/cron";
import { brief, timelineOf } from "../helpers/engine";
import { expectError } from "../helpers/expect";
import { type Caller, createCaller } from "../helpers/factories";
import {
  type Deployment,
  engineCreateOk,
  listReviews,
  postReview,
  protectedWorld,
  readDeployment,
} from "../helpers/protection";

/** A review as its request's first batch commits it, `agoMs` ago. */
async function committedReview(d: Deployment, who: Caller, state: "approved" | "rejected", agoMs = 0) {
  await env.DB.prepare(
    "INSERT INTO deployment_reviews (deployment_id, account_id, project_id, state, comment, created_at) SELECT id, ?, project_id, ?, NULL, ? FROM deployments WHERE id = ?",
  )
    .bind(who.accountId, state, new Date(Date.now() - agoMs).toISOString(), d.id)
    .run();
}

async function world(required: number) {
  const w = await protectedWorld({ required_approvals: required });
  const [a, b] = [await createCaller(w.org, "admin"), await createCaller(w.org, "admin")];
  return { ...w, a, b };
}

const ownStatuses = async (key: string, id: string) =>
  brief(await timelineOf(key, id)).filter((e) => e.startsWith("status:-:"));

describe("a review's decision whose consequence a crash lost", () => {
  it("a rejection committed, its cancel lost: the next review is 409, records nothing, and cancels it", async () => {
    const w = await world(2);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await committedReview(d, w.a, "rejected");
    expectError(await postReview(w.b, d.id, { state: "approved" }), 409, "conflict");
    expect((await listReviews(w.owner, d.id)).body.data.map((r) => r.state)).toEqual(["rejected"]);
    expect((await readDeployment(w.owner, d.id)).status).toBe("cancelled");
    expect(await ownStatuses(w.owner.key, d.id)).toEqual(["status:-:waiting", "status:-:cancelled"]);
    const entries = await timelineOf(w.owner.key, d.id);
    expect(entries.find((e) => e.status === "cancelled" && e.stack_id === null)?.status_reason).toBe(
      `Rejected by account ${w.a.accountId}.`,
    );
  });

  it("the last approval committed, its release lost: the next review is 409 and releases it", async () => {
    const w = await world(1);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await committedReview(d, w.a, "approved");
    expectError(await postReview(w.b, d.id, { state: "rejected" }), 409, "conflict");
    const after = await readDeployment(w.owner, d.id);
    expect(after.status).toBe("queued");
    expect(after.gate).toMatchObject({ approvals: 1, blocked_by: [] });
    expect(await ownStatuses(w.owner.key, d.id)).toEqual(["status:-:waiting", "status:-:queued"]);
  });

  it("the cron carries out decisions over a minute old that nothing touched again, and leaves a fresh one to its request", async () => {
    const w = await world(1);
    const [rejected, approved, fresh] = [
      await engineCreateOk(w.environmentId, [w.stack.id]),
      await engineCreateOk(w.environmentId, [w.stack.id]),
      await engineCreateOk(w.environmentId, [w.stack.id]),
    ];
    await committedReview(rejected, w.a, "rejected", 2 * 60_000);
    await committedReview(approved, w.a, "approved", 2 * 60_000);
    await committedReview(fresh, w.a, "rejected");
    // Its summary counts these two (and what other files sharing the runtime left overdue).
    expect(overdueSettled(await runCron())).toBeGreaterThanOrEqual(2);
    expect((await readDeployment(w.owner, rejected.id)).status).toBe("cancelled");
    expect((await readDeployment(w.owner, approved.id)).status).toBe("queued");
    expect((await readDeployment(w.owner, fresh.id)).status).toBe("waiting");
  });

  it("an approval that left it waiting, its settling lost: the cron has its gate count it a minute on", async () => {
    const w = await world(2);
    const [old, fresh] = [
      await engineCreateOk(w.environmentId, [w.stack.id]),
      await engineCreateOk(w.environmentId, [w.stack.id]),
    ];
    await committedReview(old, w.a, "approved", 2 * 60_000);
    await committedReview(fresh, w.a, "approved");
    await runCron();
    const counted = await readDeployment(w.owner, old.id);
    expect(counted.status).toBe("waiting");
    expect(counted.gate).toMatchObject({ approvals: 1, blocked_by: ["approval"] });
    expect(counted.updated_at > old.updated_at).toBe(true);
    // A fresh one is its own request's to settle.
    expect((await readDeployment(w.owner, fresh.id)).gate).toMatchObject({ approvals: 0 });
  });
});

describe("the cron's sweep of gates meeting a deletion", () => {
  it("a deployment deleted between the sweep's read and its cancel is nothing to do: the run goes on", async () => {
    const w = await world(1);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await committedReview(d, w.a, "rejected", 2 * 60_000);
    // The sweep reads the deployment, then (as its project's delete would) it is gone before the
    // cancel's compare-and-set.
    const deleting = interceptStatements({
      'update "deployments" set "data"': once(async () => {
        await env.DB.prepare("DELETE FROM deployments WHERE id = ?").bind(d.id).run();
      }),
    });
    await runCron(SWEEP_CRON, { ...env, DB: deleting });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM deployments WHERE id = ?")
      .bind(d.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });
});
