/**
 * `supersede` (API_CONTRACT §26) between a newer deployment's entry into `queued` and its
 * supersede, which runs after that write (src/services/deployments/gate-after.ts): "when a
 * deployment of the environment enters `queued`, every older deployment of that environment still
 * `queued` or `waiting` becomes `cancelled`". In that window (or for good, when the supersede was
 * cut short and waits for the cron's sweep) an older deployment is never started by the engine,
 * never listed for it, and never released beside the newer one: a release that meets it cancels
 * instead, naming the newer one.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { interceptStatements, once, request } from "../../helpers/api";
import { checkedWorld, conclude, deploymentEvents } from "../../helpers/checks";
import { runCron, supersedeDue } from "../../helpers/cron";
import { timelineOf } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { capturedWhile } from "../../helpers/logs";
import {
  approve,
  cancel,
  type Deployment,
  engineCreateOk,
  engineMove,
  inEngineQueue,
  lock,
  protect,
  protectedWorld,
  reviewsPath,
  rowOf,
  unlock,
} from "../../helpers/protection";

/** The supersede's read of the policy (gate-after.ts `supersedes`), failed once: the supersede is cut short. */
const supersedeCutShort = () => ({
  'select "concurrency" from "environment_protections"': once(() =>
    Promise.reject(new Error("D1_ERROR: injected failure")),
  ),
});

/** An approval whose supersede is cut short (its review and release committed); asserts the fault's log line. */
async function approvedCutShort(key: string, deploymentId: string) {
  const { result, lines } = await capturedWhile(["error", "warn"], () =>
    request<Deployment & ErrorBody>("POST", reviewsPath(deploymentId), {
      key,
      body: { state: "approved" },
      bindings: { DB: interceptStatements(supersedeCutShort()) },
    }),
  );
  expect(result.status, result.raw).toBe(200);
  expect(result.body.status).toBe("queued");
  expect(lines.map((l) => l.msg)).toContain(
    "a deployment's supersede failed after the write; left to its backstop",
  );
  return result.body;
}

/**
 * `deploymentId` cancelled by `newerId`'s supersede: its own last timeline entry names it, and it
 * was never released (no `deployment.released`), unless `releasedBefore` (once, before the newer one).
 */
async function expectSuperseded(key: string, deploymentId: string, newerId: string, releasedBefore = false) {
  expect((await rowOf(deploymentId)).status).toBe("cancelled");
  const own = (await timelineOf(key, deploymentId)).filter((e) => e.type === "status" && e.stack_id === null);
  expect(own.at(-1)?.status_reason).toBe(`Superseded by deployment ${newerId}.`);
  expect(await deploymentEvents("deployment.released", deploymentId)).toHaveLength(releasedBefore ? 1 : 0);
}

describe("supersede before the newer deployment's supersede has run", () => {
  it("the engine neither lists nor starts a queued deployment older than a newer one queued under supersede; the newer one starts", async () => {
    const w = await protectedWorld({ required_approvals: 1, concurrency: "supersede" });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    expect((await approve(w.owner, older.id)).status).toBe("queued");
    const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
    await approvedCutShort(w.owner.key, newer.id);
    expect((await rowOf(older.id)).status).toBe("queued");
    expect(await inEngineQueue(older, newer)).toEqual([false, true]);
    const move = await engineMove(older.id, "in_progress");
    expect(move.status, move.raw).toBe(409);
    expect(move.raw).toContain("A newer deployment of its environment entered `queued` (`supersede`)");
    expect((await rowOf(older.id)).status).toBe("queued");
    expect((await engineMove(newer.id, "in_progress")).status).toBe(200);
  });

  it("a policy changed to supersede cancels nothing and supersedes nothing by itself: both queued ones stay listed, and an older waiting one is released", async () => {
    const w = await protectedWorld({ required_approvals: 1, concurrency: "parallel" });
    const waiting = await engineCreateOk(w.environmentId, [w.stack.id]);
    const first = await engineCreateOk(w.environmentId, [w.stack.id]);
    const second = await engineCreateOk(w.environmentId, [w.stack.id]);
    await approve(w.owner, first.id);
    await approve(w.owner, second.id);
    await protect(w.owner, w.environmentId, { required_approvals: 1, concurrency: "supersede" });
    // Entered `queued` under `parallel`: no supersede is owed, the list is `serial`'s.
    expect(await inEngineQueue(first, second)).toEqual([true, true]);
    // The oldest's release enters `queued` under `supersede`: it cancels what is older than it (nothing).
    const released = await approve(w.owner, waiting.id);
    expect(released.status).toBe("queued");
    expect(await deploymentEvents("deployment.released", waiting.id)).toHaveLength(1);
    expect([(await rowOf(first.id)).status, (await rowOf(second.id)).status]).toEqual(["queued", "queued"]);
    expect((await engineMove(first.id, "in_progress")).status).toBe(200);
  });

  it("an approval of an older deployment after a newer one was released (its supersede cut short) cancels it, naming the newer one; never released", async () => {
    const w = await protectedWorld({ required_approvals: 1, concurrency: "supersede" });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
    await approvedCutShort(w.owner.key, newer.id);
    // The fault did what it says: the older one is still waiting beside the queued newer one.
    expect((await rowOf(older.id)).status).toBe("waiting");
    const answered = await approve(w.owner, older.id);
    expect(answered.status).toBe("cancelled");
    expect((await rowOf(older.id)).status).toBe("cancelled");
    expect((await rowOf(newer.id)).status).toBe("queued");
    await expectSuperseded(w.owner.key, older.id, newer.id);
  });

  it("a release whose compare-and-set meets a newer deployment queued since its read cancels instead", async () => {
    const w = await protectedWorld({ required_approvals: 1, concurrency: "supersede" });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
    // Between the approval's read of the gate and its release's write, the newer one enters
    // `queued` (its row and its timeline entry, as its own release writes them), its supersede not
    // yet run.
    const DB = interceptStatements({
      'update "deployments" set': once(async () => {
        const now = new Date().toISOString();
        await env.DB.batch([
          env.DB.prepare(
            "UPDATE deployments SET status = 'queued', gate = json_set(gate, '$.blocked_by', json('[]')), updated_at = ?2 WHERE id = ?1",
          ).bind(newer.id, now),
          env.DB.prepare(
            "INSERT INTO deployment_timeline (deployment_id, seq, type, created_at, stack_id, status) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM deployment_timeline WHERE deployment_id = ?1), 'status', ?2, NULL, 'queued')",
          ).bind(newer.id, now),
        ]);
      }),
    });
    const res = await request<Deployment & ErrorBody>("POST", reviewsPath(older.id), {
      key: w.owner.key,
      body: { state: "approved" },
      bindings: { DB },
    });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.status).toBe("cancelled");
    await expectSuperseded(w.owner.key, older.id, newer.id);
    expect((await timelineOf(w.owner.key, older.id)).some((e) => e.status === "queued")).toBe(false);
  });

  it("the last check's pass of an older deployment after a newer one was released is 409: it is cancelled, naming the newer one", async () => {
    const w = await checkedWorld([{ name: "ci", timeout: 86_400, on_timeout: "fail" }], {
      concurrency: "supersede",
    });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
    const { result: released, lines } = await capturedWhile(["error", "warn"], () =>
      conclude(w.owner, newer.id, "ci", { conclusion: "passed" }, supersedeCutShort()),
    );
    expect(released.status, released.raw).toBe(200);
    expect(released.body.status).toBe("queued");
    expect(lines.map((l) => l.msg)).toContain(
      "a deployment's supersede failed after the write; left to its backstop",
    );
    expect((await rowOf(older.id)).status).toBe("waiting");
    const res = await conclude(w.owner, older.id, "ci", { conclusion: "passed" });
    expect(res.status, res.raw).toBe(409);
    await expectSuperseded(w.owner.key, older.id, newer.id);
  });

  it("an engine report that leaves a deployment queued does not make it owe a cancel: queued before the policy changed, it holds nothing back", async () => {
    const w = await protectedWorld({ required_approvals: 1, concurrency: "parallel" });
    const waiting = await engineCreateOk(w.environmentId, [w.stack.id]);
    await protect(w.owner, w.environmentId, { required_approvals: 0, concurrency: "parallel" });
    const a = await engineCreateOk(w.environmentId, [w.stack.id]);
    const b = await engineCreateOk(w.environmentId, [w.stack.id]);
    await protect(w.owner, w.environmentId, { required_approvals: 0, concurrency: "supersede" });
    // A report that changes nothing still writes the row (its updated_at), not an entry into `queued`.
    const report = await engineMove(b.id, "queued");
    expect(report.status, report.raw).toBe(200);
    expect(await inEngineQueue(a, b)).toEqual([true, true]);
    expect((await approve(w.owner, waiting.id)).status).toBe("queued");
    expect((await engineMove(a.id, "in_progress")).status).toBe(200);
  });

  it("a newer deployment owes the cancel once it started or finished too: an approval then cancels, the engine never starts the older one, and the cron cancels it", async () => {
    const w = await protectedWorld({ required_approvals: 1, concurrency: "supersede" });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    const stillWaiting = await engineCreateOk(w.environmentId, [w.stack.id]);
    expect((await approve(w.owner, older.id)).status).toBe("queued");
    const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
    await approvedCutShort(w.owner.key, newer.id);
    expect([(await rowOf(older.id)).status, (await rowOf(stillWaiting.id)).status]).toEqual([
      "queued",
      "waiting",
    ]);
    expect((await engineMove(newer.id, "in_progress")).status).toBe(200);
    // Running: an approval of the older waiting one cancels it.
    expect((await approve(w.owner, stillWaiting.id)).status).toBe("cancelled");
    await expectSuperseded(w.owner.key, stillWaiting.id, newer.id);
    // Finished: the older queued one is still owed its cancel, so never listed nor started.
    expect((await engineMove(newer.id, "succeeded")).status).toBe(200);
    expect(await inEngineQueue(older)).toEqual([false]);
    expect((await engineMove(older.id, "in_progress")).status).toBe(409);
    // A minute on, the cron's sweep cancels it, naming the newer one.
    await supersedeDue(w.environmentId, newer.id);
    await runCron();
    await expectSuperseded(w.owner.key, older.id, newer.id, true);
    await expectSuperseded(w.owner.key, stillWaiting.id, newer.id);
  });

  it("what a newer deployment owes outlives a lock and an unlock, a PUT that keeps supersede, and the newer one's own cancel", async () => {
    const w = await protectedWorld({ required_approvals: 1, concurrency: "supersede" });
    const queuedOlder = await engineCreateOk(w.environmentId, [w.stack.id]);
    expect((await approve(w.owner, queuedOlder.id)).status).toBe("queued");
    const waitingOlder = await engineCreateOk(w.environmentId, [w.stack.id]);
    const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
    await approvedCutShort(w.owner.key, newer.id);
    await lock(w.owner, w.environmentId);
    // The unlock settles the waiting one: owed a cancel, it is cancelled, naming the newer one.
    await unlock(w.owner, w.environmentId);
    await expectSuperseded(w.owner.key, waitingOlder.id, newer.id);
    await protect(w.owner, w.environmentId, { required_approvals: 1, concurrency: "supersede" });
    expect(await inEngineQueue(queuedOlder, newer)).toEqual([false, true]);
    const cancelled = await cancel(w.owner.key, newer.id);
    expect([cancelled.status, cancelled.body.status]).toEqual([200, "cancelled"]);
    expect((await engineMove(queuedOlder.id, "in_progress")).status).toBe(409);
    expect(await inEngineQueue(queuedOlder)).toEqual([false]);
  });

  it("a PUT that changes the policy to supersede and back makes what entered queued before owe nothing", async () => {
    const w = await protectedWorld({ concurrency: "supersede" });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    const policy = await env.DB.prepare(
      "SELECT concurrency_since AS since FROM environment_protections WHERE environment_id = ?",
    ).bind(w.environmentId);
    const since = (await policy.first<{ since: string }>())?.since;
    expect(since).toEqual(expect.any(String));
    // A PUT that keeps the policy keeps when it took effect; one that changes it moves it.
    await protect(w.owner, w.environmentId, { concurrency: "supersede", wait_timer: 0 });
    expect((await policy.first<{ since: string }>())?.since).toBe(since);
    await protect(w.owner, w.environmentId, { concurrency: "parallel" });
    const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
    await protect(w.owner, w.environmentId, { concurrency: "supersede" });
    const moved = (await policy.first<{ since: string }>())?.since ?? "";
    expect(moved > (since ?? "")).toBe(true);
    expect(await inEngineQueue(older, newer)).toEqual([true, true]);
  });
});
