/**
 * Protected environments under concurrency (API_CONTRACT §26, with §3, §9, §17, §19): approvals,
 * cancels, locks, unlocks, wait timers, the engine's moves and `supersede` racing each other end
 * in one consistent state. Never a 500; a release happens once (one `queued` entry in the
 * timeline); no deployment reaches `in_progress` while something holds it (a lock, a gate, another
 * deployment of a one-at-a-time environment). Real concurrency: many rounds, requests started
 * 0–3 ms apart, several worlds at once.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { ApiResponse } from "../../helpers/api";
import { interceptStatements, once, request } from "../../helpers/api";
import { brief, reportOk, timelineOf } from "../../helpers/engine";
import { type ErrorBody, expectError } from "../../helpers/expect";
import {
  type Caller,
  createCaller,
  createOrgWithOwner,
  createProject,
  createStack,
  type Org,
  unique,
} from "../../helpers/factories";
import {
  type Deployment,
  deleteLock,
  engineCreateOk,
  engineMove,
  inEngineQueue,
  lock,
  lockPath,
  type Protection,
  postLock,
  postReview,
  protect,
  readDeployment,
  rowOf,
  type Settings,
  unlock,
} from "../../helpers/protection";
import { sleep, until } from "../../helpers/wait";

type Answer = ApiResponse<Deployment & ErrorBody>;

const later = <T>(ms: number, f: () => Promise<T>) => sleep(ms).then(f);

const cancel = (key: string, id: string) =>
  request<Deployment & ErrorBody>("PATCH", `/v1/deployments/${id}/cancel`, { key });

/** The deployment-level statuses of its timeline, in order. */
async function ownStatuses(key: string, id: string): Promise<string[]> {
  return brief(await timelineOf(key, id))
    .filter((e) => e.startsWith("status:-:"))
    .map((e) => e.slice("status:-:".length));
}

function expectNo5xx(...answers: Array<{ status: number; raw: string }>) {
  for (const a of answers) expect(a.status, a.raw).toBeLessThan(500);
}

/**
 * The organization of the current test's worlds, its owner and the admins made so far. A world is
 * a project of its own (its default environment, a stack, its protection, lock and deployments),
 * and every race here stays inside one world; the accounts and keys around it take no part. So the
 * worlds of a test share them: a world of its own organization and reviewers cost 7 requests and 3
 * more per reviewer, about 60 % of this file's requests. A new organization for each test: its
 * worlds (24 at most) stay far under the projects limit (§29: 100).
 */
type Team = { org: Org; owner: Caller; admins: Caller[]; adding: Promise<void> };
let team: Promise<Team> | undefined;
beforeEach(() => {
  team = undefined;
});

/** The test's organization and owner, with at least `n` admins (each an account and key of its own). */
async function teamOf(n: number): Promise<{ org: Org; owner: Caller; admins: Caller[] }> {
  team ??= createOrgWithOwner().then(({ org, owner }) => ({
    org,
    owner,
    admins: [],
    adding: Promise.resolve(),
  }));
  const t = await team;
  // One maker at a time: worlds made at once ask for their admins at once.
  t.adding = t.adding.then(async () => {
    while (t.admins.length < n) t.admins.push(await createCaller(t.org, "admin"));
  });
  await t.adding;
  return { org: t.org, owner: t.owner, admins: t.admins.slice(0, n) };
}

/** A fresh project of the test's organization, with a stack in its default environment. */
async function world() {
  const { org, owner } = await teamOf(0);
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  return { org, owner, project, environmentId, stack: await createStack(environmentId) };
}

/** A world whose environment is protected with `settings`. */
async function protectedWorld(settings: Partial<Settings>) {
  const w = await world();
  return { ...w, protection: await protect(w.owner, w.environmentId, settings) };
}

/** A protected world with `n` org admins besides its owner (reviewers). */
async function reviewers(settings: Partial<Settings>, n: number) {
  const w = await protectedWorld(settings);
  return { ...w, admins: (await teamOf(n)).admins };
}

describe("protection races", () => {
  it("approvals arriving together that complete the count release it exactly once", async () => {
    const outcomes = { bothQueued: 0, oneQueued: 0 };
    for (let round = 0; round < 5; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 4 }, () => reviewers({ required_approvals: 2 }, 2)),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          const d = await engineCreateOk(w.environmentId, [w.stack.id]);
          const [a, b] = w.admins as [Caller, Caller];
          const answers = await Promise.all([
            later(0, () => postReview(a, d.id, { state: "approved" })),
            later(i % 4, () => postReview(b, d.id, { state: "approved" })),
          ]);
          expectNo5xx(...answers);
          // Both arrive while it waits for approvals: both are taken.
          for (const res of answers) expect(res.status, res.raw).toBe(200);
          const queued = answers.filter((res) => res.body.status === "queued").length;
          expect(queued).toBeGreaterThanOrEqual(1);
          if (queued === 2) outcomes.bothQueued++;
          else outcomes.oneQueued++;
          const after = await readDeployment(w.owner, d.id);
          expect(after.status).toBe("queued");
          expect(after.gate).toEqual({
            required_approvals: 2,
            approvals: 2,
            wait_until: null,
            blocked_by: [],
            checks: [],
          });
          expect(await ownStatuses(w.owner.key, d.id)).toEqual(["waiting", "queued"]);
        }),
      );
    }
    expect(outcomes.bothQueued + outcomes.oneQueued).toBe(20);
  });

  it("three approvals at once for three required: one release, three approvals counted", async () => {
    for (let round = 0; round < 4; round++) {
      const w = await reviewers({ required_approvals: 3 }, 3);
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const answers = await Promise.all(
        w.admins.map((admin, i) => later(i % 3, () => postReview(admin, d.id, { state: "approved" }))),
      );
      for (const res of answers) expect(res.status, res.raw).toBe(200);
      const after = await readDeployment(w.owner, d.id);
      expect([after.status, after.gate?.approvals, after.gate?.blocked_by]).toEqual(["queued", 3, []]);
      expect(await ownStatuses(w.owner.key, d.id)).toEqual(["waiting", "queued"]);
    }
  });

  it("one account approving twice at once: one review, one 409", async () => {
    for (let round = 0; round < 4; round++) {
      const w = await reviewers({ required_approvals: 2 }, 1);
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const admin = w.admins[0] as Caller;
      const answers = await Promise.all([
        postReview(admin, d.id, { state: "approved" }),
        later(round % 3, () => postReview(admin, d.id, { state: "approved" })),
      ]);
      expectNo5xx(...answers);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      const after = await readDeployment(w.owner, d.id);
      expect([after.status, after.gate?.approvals]).toEqual(["waiting", 1]);
    }
  });

  it("an approval racing a cancel: always cancelled in the end; the approval is 200 or 409; never in_progress", async () => {
    const seen = { approvedFirst: 0, cancelledFirst: 0 };
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 5 }, () => reviewers({ required_approvals: 1 }, 1)),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          const d = await engineCreateOk(w.environmentId, [w.stack.id]);
          const [first, second] = i % 2 === 0 ? [0, i % 4] : [i % 4, 0];
          const [approval, cancelled] = await Promise.all([
            later(first, () => postReview(w.admins[0] as Caller, d.id, { state: "approved" })),
            later(second, () => cancel(w.owner.key, d.id)),
          ]);
          expectNo5xx(approval, cancelled);
          // Waiting and queued are both cancellable (§3, §26): the cancel always succeeds.
          expect(cancelled.status, cancelled.raw).toBe(200);
          expect(cancelled.body.status).toBe("cancelled");
          expect(cancelled.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled"]);
          expect([200, 409]).toContain(approval.status);
          if (approval.status === 200) expect(["queued", "cancelled"]).toContain(approval.body.status);
          const after = await readDeployment(w.owner, d.id);
          expect(after.status).toBe("cancelled");
          expect(after.started_at).toBeNull();
          const statuses = await ownStatuses(w.owner.key, d.id);
          if (statuses.includes("queued")) {
            seen.approvedFirst++;
            expect(statuses).toEqual(["waiting", "queued", "cancelled"]);
          } else {
            seen.cancelledFirst++;
            expect(statuses).toEqual(["waiting", "cancelled"]);
          }
          // Final: the engine cannot take it.
          expect((await engineMove(d.id, "in_progress")).status).toBe(409);
        }),
      );
    }
    expect(seen.approvedFirst + seen.cancelledFirst).toBe(20);
    // Both orders happened: the race was run, not only one side of it.
    expect(seen.approvedFirst).toBeGreaterThan(0);
    expect(seen.cancelledFirst).toBeGreaterThan(0);
  });

  it("a rejection racing an approval that would complete the count: one consistent end, released or cancelled", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 4 }, () => reviewers({ required_approvals: 1 }, 2)),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          const d = await engineCreateOk(w.environmentId, [w.stack.id]);
          const [a, b] = w.admins as [Caller, Caller];
          const [approval, rejection] = await Promise.all([
            later(i % 2, () => postReview(a, d.id, { state: "approved" })),
            later((i + 1) % 2, () => postReview(b, d.id, { state: "rejected" })),
          ]);
          expectNo5xx(approval, rejection);
          const after = await readDeployment(w.owner, d.id);
          const statuses = await ownStatuses(w.owner.key, d.id);
          if (after.status === "queued") {
            // The approval released it first; the rejection came too late.
            expect(approval.status).toBe(200);
            expect(rejection.status).toBe(409);
            expect(statuses).toEqual(["waiting", "queued"]);
          } else {
            expect(after.status).toBe("cancelled");
            expect(rejection.status, rejection.raw).toBe(200);
            expect(statuses.filter((s) => s === "queued")).toHaveLength(0);
            expect(statuses).toEqual(["waiting", "cancelled"]);
          }
        }),
      );
    }
  });

  it("a rejection racing approvals that would complete a count of two: one outcome; no review recorded after the rejection", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 6 }, () => reviewers({ required_approvals: 2 }, 4)),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          const d = await engineCreateOk(w.environmentId, [w.stack.id]);
          const [a, b, c, r] = w.admins as [Caller, Caller, Caller, Caller];
          const answers = await Promise.all([
            // The rejection first or among them; the approvals spread over the moments after it.
            later(i % 3, () => postReview(a, d.id, { state: "approved" })),
            later(2 + (i % 4), () => postReview(b, d.id, { state: "approved" })),
            later(4 + (i % 5), () => postReview(c, d.id, { state: "approved" })),
            later(i % 2, () => postReview(r, d.id, { state: "rejected" })),
          ]);
          expectNo5xx(...answers);
          for (const x of answers) expect([200, 409], x.raw).toContain(x.status);
          const rejection = answers[3] as Answer;
          const approved = answers.slice(0, 3).filter((x) => x.status === 200).length;
          const reviews = await request<{ data: { account_id: string; state: string }[] }>(
            "GET",
            `/v1/deployments/${d.id}/reviews`,
            { key: w.owner.key },
          );
          // Every 200 is a recorded review, and nothing else is.
          expect(reviews.body.data).toHaveLength(answers.filter((x) => x.status === 200).length);
          const after = await readDeployment(w.owner, d.id);
          const statuses = await ownStatuses(w.owner.key, d.id);
          if (rejection.status === 200) {
            // The rejection found the count short, and no approval landed after it.
            expect(approved).toBeLessThan(2);
            expect(after.status).toBe("cancelled");
            expect(statuses).toEqual(["waiting", "cancelled"]);
          } else {
            expect(approved).toBe(2);
            expect(after.status).toBe("queued");
            expect(after.gate?.approvals).toBe(2);
            expect(statuses).toEqual(["waiting", "queued"]);
          }
        }),
      );
    }
    // 24 worlds and their racing requests: past 30 s beside other suites when each world had its
    // own organization and five accounts.
  }, 60_000);

  it("a lock racing an engine move to in_progress: the move lands before the lock (in_progress) or is 409 (queued, out of the engine's list)", async () => {
    const seen = { started: 0, refused: 0 };
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(Array.from({ length: 5 }, () => world()));
      await Promise.all(
        worlds.map(async (w, i) => {
          const d = await engineCreateOk(w.environmentId, [w.stack.id]);
          const [first, second] = i % 2 === 0 ? [0, i % 4] : [i % 4, 0];
          const [locked, moved] = await Promise.all([
            later(first, () => postLock(w.owner, w.environmentId, { reason: "race" })),
            later(second, () => engineMove(d.id, "in_progress")),
          ]);
          expectNo5xx(locked, moved);
          expect(locked.status, locked.raw).toBe(200);
          const after = await readDeployment(w.owner, d.id);
          if (moved.status === 200) {
            seen.started++;
            expect(after.status).toBe("in_progress");
            // Already in progress: it finishes under the lock.
            expect((await engineMove(d.id, "succeeded")).status).toBe(200);
          } else {
            seen.refused++;
            expect(moved.status, moved.raw).toBe(409);
            expect(after.status).toBe("queued");
            expect(after.started_at).toBeNull();
            expect(await inEngineQueue(d)).toEqual([false]);
            expect((await engineMove(d.id, "in_progress")).status).toBe(409);
            await unlock(w.owner, w.environmentId);
            expect((await engineMove(d.id, "in_progress")).status).toBe(200);
          }
        }),
      );
    }
    expect(seen.started + seen.refused).toBe(20);
    expect(seen.started).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it("a lock racing the approval that completes the count: released then held from the engine, or held by the lock; never startable while locked", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 4 }, () => reviewers({ required_approvals: 1 }, 1)),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          const d = await engineCreateOk(w.environmentId, [w.stack.id]);
          const [locked, approval] = await Promise.all([
            later(i % 2, () => postLock(w.owner, w.environmentId, { reason: "race" })),
            later((i + 1) % 2, () => postReview(w.admins[0] as Caller, d.id, { state: "approved" })),
          ]);
          expectNo5xx(locked, approval);
          expect(locked.status, locked.raw).toBe(200);
          expect(approval.status, approval.raw).toBe(200);
          const after = await readDeployment(w.owner, d.id);
          if (after.status === "waiting") {
            expect(after.gate).toMatchObject({ approvals: 1, blocked_by: ["lock"] });
          } else {
            expect(after.status).toBe("queued");
            expect(after.gate?.blocked_by).toEqual([]);
          }
          expect(await inEngineQueue(d)).toEqual([false]);
          expect((await engineMove(d.id, "in_progress")).status).toBe(409);
          await unlock(w.owner, w.environmentId);
          const released = await readDeployment(w.owner, d.id);
          expect(released.status).toBe("queued");
          expect(await ownStatuses(w.owner.key, d.id)).toEqual(["waiting", "queued"]);
          expect((await engineMove(d.id, "in_progress")).status).toBe(200);
        }),
      );
    }
  });

  it("two unlocks at once release each waiting deployment once", async () => {
    for (let round = 0; round < 4; round++) {
      const w = await world();
      await lock(w.owner, w.environmentId);
      const made: Deployment[] = [];
      for (let i = 0; i < 3; i++) made.push(await engineCreateOk(w.environmentId, [w.stack.id]));
      const answers = await Promise.all([
        deleteLock(w.owner, w.environmentId),
        later(round % 3, () => deleteLock(w.owner, w.environmentId)),
      ]);
      for (const res of answers) expect(res.status, res.raw).toBe(204);
      for (const d of made) {
        expect((await readDeployment(w.owner, d.id)).status).toBe("queued");
        expect(await ownStatuses(w.owner.key, d.id)).toEqual(["waiting", "queued"]);
      }
    }
  });

  it("an unlock racing a lock: the environment ends locked or not, and its deployments agree with it", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(Array.from({ length: 4 }, () => world()));
      await Promise.all(
        worlds.map(async (w, i) => {
          await lock(w.owner, w.environmentId, "first");
          const d = await engineCreateOk(w.environmentId, [w.stack.id]);
          const [unlocked, relocked] = await Promise.all([
            later(i % 2, () => deleteLock(w.owner, w.environmentId)),
            later((i + 1) % 2, () => postLock(w.owner, w.environmentId, { reason: "second" })),
          ]);
          expectNo5xx(unlocked, relocked);
          expect(unlocked.status).toBe(204);
          // The second lock lands after the unlock (200) or finds it still locked (409).
          expect([200, 409]).toContain(relocked.status);
          const after = await readDeployment(w.owner, d.id);
          const locked = (
            await request<{ locked: unknown }>("GET", `/v1/environments/${w.environmentId}/protection`, {
              key: w.owner.key,
            })
          ).body.locked;
          if (relocked.status === 409) expect(locked).toBeNull();
          if (locked === null) expect(after.status).toBe("queued");
          else expect((await engineMove(d.id, "in_progress")).status).toBe(409);
          // Whatever the order, it was released at most once.
          expect(
            (await ownStatuses(w.owner.key, d.id)).filter((s) => s === "queued").length,
          ).toBeLessThanOrEqual(1);
        }),
      );
    }
  });

  it("a create racing a change of the protection takes the protection wholly before or wholly after", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(Array.from({ length: 5 }, () => world()));
      await Promise.all(
        worlds.map(async (w, i) => {
          const [first, second] = i % 2 === 0 ? [0, i % 4] : [i % 4, 0];
          const [created, changed] = await Promise.all([
            later(first, () => engineCreateOk(w.environmentId, [w.stack.id])),
            later(second, () =>
              request("PUT", `/v1/environments/${w.environmentId}/protection`, {
                key: w.owner.key,
                body: {
                  required_approvals: 2,
                  reviewer_role: "owner",
                  prevent_self_review: true,
                  wait_timer: 600,
                  concurrency: "parallel",
                },
              }),
            ),
          ]);
          expect(changed.status, changed.raw).toBe(200);
          if (created.status === "queued") expect(created.gate).toBeNull();
          else {
            expect(created.status).toBe("waiting");
            expect(created.gate).toMatchObject({
              required_approvals: 2,
              approvals: 0,
              blocked_by: ["approval", "wait_timer"],
              checks: [],
            });
            expect(Date.parse(created.gate?.wait_until ?? "")).toBe(Date.parse(created.created_at) + 600_000);
          }
          expect(await readDeployment(w.owner, created.id)).toEqual(created);
        }),
      );
    }
  });

  it("a create racing a lock: it waits on the lock, or it is queued and kept from the engine; never startable while locked", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(Array.from({ length: 5 }, () => world()));
      await Promise.all(
        worlds.map(async (w, i) => {
          const [first, second] = i % 2 === 0 ? [0, i % 4] : [i % 4, 0];
          const [created, locked] = await Promise.all([
            later(first, () => engineCreateOk(w.environmentId, [w.stack.id])),
            later(second, () => postLock(w.owner, w.environmentId, { reason: "race" })),
          ]);
          expect(locked.status, locked.raw).toBe(200);
          const after = await readDeployment(w.owner, created.id);
          if (after.status === "waiting") expect(after.gate?.blocked_by).toEqual(["lock"]);
          else expect([after.status, after.gate]).toEqual(["queued", null]);
          expect(await inEngineQueue(after)).toEqual([false]);
          expect((await engineMove(created.id, "in_progress")).status).toBe(409);
          await unlock(w.owner, w.environmentId);
          expect((await readDeployment(w.owner, created.id)).status).toBe("queued");
          expect((await engineMove(created.id, "in_progress")).status).toBe(200);
        }),
      );
    }
  });

  it("serial: two engine starts at once in one environment: exactly one runs", async () => {
    for (let round = 0; round < 5; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 4 }, () => protectedWorld({ concurrency: "serial" })),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          const a = await engineCreateOk(w.environmentId, [w.stack.id]);
          const b = await engineCreateOk(w.environmentId, [w.stack.id]);
          const moves = await Promise.all([
            engineMove(a.id, "in_progress"),
            later(i % 3, () => engineMove(b.id, "in_progress")),
          ]);
          expectNo5xx(...moves);
          expect(moves.map((m) => m.status).sort()).toEqual([200, 409]);
          const statuses = [
            (await readDeployment(w.owner, a.id)).status,
            (await readDeployment(w.owner, b.id)).status,
          ];
          expect(statuses.sort()).toEqual(["in_progress", "queued"]);
        }),
      );
    }
  });

  it("supersede racing a release: two waiting deployments approved at once end with the newer queued and the older cancelled, naming it", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 4 }, () => reviewers({ required_approvals: 1, concurrency: "supersede" }, 1)),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          const older = await engineCreateOk(w.environmentId, [w.stack.id]);
          await sleep(2);
          const newer = await engineCreateOk(w.environmentId, [w.stack.id]);
          const admin = w.admins[0] as Caller;
          const [first, second] = i % 2 === 0 ? [0, i % 4] : [i % 4, 0];
          const answers: Answer[] = await Promise.all([
            later(first, () => postReview(admin, older.id, { state: "approved" })),
            later(second, () => postReview(admin, newer.id, { state: "approved" })),
          ]);
          expectNo5xx(...answers);
          expect([200, 409]).toContain(answers[0]?.status);
          expect(answers[1]?.status, answers[1]?.raw).toBe(200);
          expect(answers[1]?.body.status).toBe("queued");
          await until(
            "the older superseded",
            async () => (await rowOf(older.id)).status === "cancelled",
            3000,
          );
          expect((await readDeployment(w.owner, newer.id)).status).toBe("queued");
          const timeline = await timelineOf(w.owner.key, older.id);
          const own = timeline.filter((e) => e.type === "status" && e.stack_id === null);
          expect(own.at(-1)?.status).toBe("cancelled");
          expect(own.at(-1)?.status_reason).toContain(newer.id);
          expect(own.filter((e) => e.status === "queued").length).toBeLessThanOrEqual(1);
          expect(await ownStatuses(w.owner.key, newer.id)).toEqual(["waiting", "queued"]);
          expect((await engineMove(older.id, "in_progress")).status).toBe(409);
        }),
      );
    }
  });

  it("supersede: an unlock racing a new deployment's create: the newer ends queued, the older cancelled naming it", async () => {
    for (let round = 0; round < 4; round++) {
      const worlds = await Promise.all(
        Array.from({ length: 4 }, () => protectedWorld({ concurrency: "supersede" })),
      );
      await Promise.all(
        worlds.map(async (w, i) => {
          await lock(w.owner, w.environmentId);
          const older = await engineCreateOk(w.environmentId, [w.stack.id]);
          await sleep(2);
          const [first, second] = i % 2 === 0 ? [0, i % 4] : [i % 4, 0];
          const [unlocked, created] = await Promise.all([
            later(first, () => deleteLock(w.owner, w.environmentId)),
            later(second, () => engineCreateOk(w.environmentId, [w.stack.id])),
          ]);
          expect(unlocked.status, unlocked.raw).toBe(204);
          await until(
            "settled",
            async () =>
              (await rowOf(created.id)).status === "queued" && (await rowOf(older.id)).status === "cancelled",
            3000,
          ).catch(() => undefined);
          const statuses = [(await rowOf(older.id)).status, (await rowOf(created.id)).status];
          expect(statuses, `created ${created.status}`).toEqual(["cancelled", "queued"]);
          const own = (await timelineOf(w.owner.key, older.id)).filter((e) => e.stack_id === null);
          expect(own.at(-1)?.status_reason).toContain(created.id);
        }),
      );
    }
  });

  it("an approval racing the wait timer's expiry releases once", async () => {
    const worlds = await Promise.all(
      Array.from({ length: 6 }, () => reviewers({ required_approvals: 1, wait_timer: 1 }, 1)),
    );
    const made = await Promise.all(worlds.map((w) => engineCreateOk(w.environmentId, [w.stack.id])));
    await Promise.all(
      worlds.map(async (w, i) => {
        const d = made[i] as Deployment;
        // Approve around wait_until: a few ms before, at, or after it.
        const at = Date.parse(d.gate?.wait_until ?? "") + (i - 3) * 3;
        await sleep(Math.max(0, at - Date.now()));
        const res = await postReview(w.admins[0] as Caller, d.id, { state: "approved" });
        expect(res.status, res.raw).toBe(200);
        await until("released", async () => (await rowOf(d.id)).status === "queued", 8000);
        expect(await ownStatuses(w.owner.key, d.id)).toEqual(["waiting", "queued"]);
      }),
    );
  });

  it("serial: as work moves through the environment, the engine's list offers one deployment at a time, and no other can start", async () => {
    const w = await protectedWorld({ concurrency: "serial" });
    const made: Deployment[] = [];
    for (let i = 0; i < 4; i++) made.push(await engineCreateOk(w.environmentId, [w.stack.id]));
    for (const d of made) {
      expect((await engineMove(d.id, "in_progress")).status).toBe(200);
      const others = made.filter((m) => m.id !== d.id);
      expect((await inEngineQueue(...others)).every((listed) => !listed)).toBe(true);
      // The others are queued (held back) or already final: none can start.
      const moves = await Promise.all(others.map((o) => engineMove(o.id, "in_progress")));
      for (const m of moves) expect(m.status, m.raw).toBe(409);
      await reportOk(d.id, { status: "succeeded" });
    }
  });
});

/**
 * Interleavings made exact: what a concurrent request writes is written by the test just before the
 * statement it would have raced (test/helpers/api.ts `interceptStatements`).
 */
describe("a lock and an unlock, each meeting another's write between its read and its own", () => {
  it("an unlock whose environment is deleted in between answers 404, not 204", async () => {
    const { owner, project } = await world();
    const created = await request<{ id: string }>("POST", `/v1/projects/${project.id}/environments`, {
      key: owner.key,
      body: { name: unique("env") },
    });
    expect(created.status, created.raw).toBe(201);
    const environmentId = created.body.id;
    await lock(owner, environmentId);
    const res = await request<ErrorBody>("DELETE", lockPath(environmentId), {
      key: owner.key,
      bindings: {
        DB: interceptStatements({
          'update "environment_protections" set "locked_reason"': once(async () => {
            await env.DB.prepare("DELETE FROM environments WHERE id = ?").bind(environmentId).run();
          }),
        }),
      },
    });
    expectError(res, 404, "not_found");
  });

  it("a lock without If-Match that meets another's lock and unlock in between locks: 200, its own reason", async () => {
    const w = await protectedWorld({});
    let step: "lock" | "unlock" | "done" = "lock";
    const theirs = (locked: boolean) =>
      env.DB.prepare(
        "UPDATE environment_protections SET locked_at = ?, locked_reason = ?, locked_account_id = ? WHERE environment_id = ?",
      )
        .bind(
          locked ? new Date().toISOString() : null,
          locked ? "theirs" : null,
          locked ? w.owner.accountId : null,
          w.environmentId,
        )
        .run();
    const res = await request<Protection & ErrorBody>("POST", lockPath(w.environmentId), {
      key: w.owner.key,
      body: { reason: "mine" },
      bindings: {
        DB: interceptStatements({
          // Just before its upsert, another lock lands; just before it reads again, an unlock.
          'insert into "environment_protections"': async () => {
            if (step !== "lock") return;
            step = "unlock";
            await theirs(true);
          },
          'select "environment_id", "project_id"': async () => {
            if (step !== "unlock") return;
            step = "done";
            await theirs(false);
          },
        }),
      },
    });
    expect(step).toBe("done");
    expect(res.status, res.raw).toBe(200);
    expect(res.body.locked).toMatchObject({ reason: "mine", account_id: w.owner.accountId });
  });
});
