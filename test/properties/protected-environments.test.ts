/**
 * Protected environments across routes (API_CONTRACT §26, with §3, §4, §9, §19, §20, §23, §25),
 * through the real Worker, D1 and Durable Objects, written from the contract's words:
 * - the gate: every route's create (internal, public, redeploy, promotion) starts `waiting` where
 *   the protection, at that moment, requires approvals, has a wait timer or is locked, with its
 *   `gate`; settings changed later leave a waiting deployment's `required_approvals` and
 *   `wait_until` alone, a lock or an unlock changes its `blocked_by`;
 * - a waiting deployment and the engine (not in its queued list, every move `409`), cancel, the
 *   lists' `status=waiting`, the timeline, the live stream and `/wait`;
 * - the release: the last approval and an unlock in their request, the wait timer within 5 s of
 *   `wait_until` without any request;
 * - the lock and the concurrency policies where the engine takes work.
 * The routes' own rules are in test/routes/environments/*Protection*, *lock* and
 * test/routes/deployments/*Review*; races in test/properties/races/protection.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../../src/db/pagination";
import type { TimelineEntry } from "../../src/schemas/timeline";
import { internal, request } from "../helpers/api";
import { createOrgWithOwnerIn, d1 } from "../helpers/databases";
import { brief, reportOk, timelineOf } from "../helpers/engine";
import { expectError, TS } from "../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  createProject,
  createProjectWithStack,
  createStack,
  unique,
} from "../helpers/factories";
import {
  approve,
  type Deployment,
  engineCreateOk,
  engineMove,
  engineQueueSince,
  inEngineQueue,
  lock,
  plusMs,
  protect,
  protectedWorld,
  publicCreateOk,
  readDeployment,
  rowOf,
  sleep,
  statusEntriesInDb,
  unlock,
  until,
} from "../helpers/protection";
import { nextEntries, openStream, readToEnd } from "../helpers/sse";

type Page = { data: Deployment[]; has_more: boolean; next_page?: string };

const redeploy = (key: string, id: string) =>
  request<Deployment>("POST", `/v1/deployments/${id}/redeploy`, { key, body: {} });

const promote = (key: string, id: string, environmentId: string) =>
  request<Deployment>("POST", `/v1/deployments/${id}/promote`, {
    key,
    body: { environment_id: environmentId },
  });

const cancel = (key: string, id: string) =>
  request<Deployment>("PATCH", `/v1/deployments/${id}/cancel`, { key });

/** The deployment-level status entries of a timeline, with their reasons. */
const ownEntries = (entries: TimelineEntry[]) =>
  entries.filter((e) => e.type === "status" && e.stack_id === null);

/** Three deployments of one stack, created (by the engine) one after the other. */
async function three(environmentId: string, stackId: string): Promise<[Deployment, Deployment, Deployment]> {
  const a = await engineCreateOk(environmentId, [stackId]);
  const b = await engineCreateOk(environmentId, [stackId]);
  return [a, b, await engineCreateOk(environmentId, [stackId])];
}

/** The ids on the first page (limit 240) of a list. */
async function idsOf(key: string, path: string): Promise<string[]> {
  const res = await request<Page>("GET", path, { key });
  expect(res.status, res.raw).toBe(200);
  return res.body.data.map((d) => d.id);
}

describe("the gate at creation", () => {
  it("approvals required: waiting, gate { required_approvals, approvals 0, wait_until null, blocked_by [approval] }, stacks queued", async () => {
    const { environmentId, stack } = await protectedWorld({ required_approvals: 2 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.status).toBe("waiting");
    expect(d.gate).toEqual({
      required_approvals: 2,
      approvals: 0,
      wait_until: null,
      blocked_by: ["approval"],
      checks: [],
    });
    expect(d.data.stacks?.map((s) => s.status)).toEqual(["queued"]);
    expect(d.started_at).toBeNull();
    expect(d.finished_at).toBeNull();
  });

  it("a wait timer: wait_until is the creation time plus wait_timer seconds, blocked_by [wait_timer]", async () => {
    const { environmentId, stack } = await protectedWorld({ wait_timer: 3600 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.status).toBe("waiting");
    expect(d.gate).toEqual({
      required_approvals: 0,
      approvals: 0,
      wait_until: plusMs(d.created_at, 3_600_000),
      blocked_by: ["wait_timer"],
      checks: [],
    });
    expect(d.gate?.wait_until).toMatch(TS);
  });

  it("locked: blocked_by [lock]", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    await lock(owner, environmentId);
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.status).toBe("waiting");
    expect(d.gate).toEqual({
      required_approvals: 0,
      approvals: 0,
      wait_until: null,
      blocked_by: ["lock"],
      checks: [],
    });
  });

  it("all three: blocked_by [approval, wait_timer, lock], in that order", async () => {
    const { owner, environmentId, stack } = await protectedWorld({
      required_approvals: 6,
      wait_timer: 86_400,
    });
    await lock(owner, environmentId);
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.gate).toEqual({
      required_approvals: 6,
      approvals: 0,
      wait_until: plusMs(d.created_at, 86_400_000),
      blocked_by: ["approval", "wait_timer", "lock"],
      checks: [],
    });
  });

  it("nothing that holds (the defaults, or only reviewer_role, prevent_self_review or concurrency changed): queued, gate null", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const plain = await engineCreateOk(environmentId, [stack.id]);
    expect([plain.status, plain.gate]).toEqual(["queued", null]);
    await protect(owner, environmentId, {
      reviewer_role: "contributor",
      prevent_self_review: false,
      concurrency: "parallel",
    });
    const still = await engineCreateOk(environmentId, [stack.id]);
    expect([still.status, still.gate]).toEqual(["queued", null]);
    await protect(owner, environmentId, { concurrency: "serial" });
    const serial = await engineCreateOk(environmentId, [stack.id]);
    expect([serial.status, serial.gate]).toEqual(["queued", null]);
  });

  it("the protection as it is at that moment: a deployment made after the approvals are turned off is queued; one made before stays waiting", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
    const before = await engineCreateOk(environmentId, [stack.id]);
    await protect(owner, environmentId, { required_approvals: 0 });
    const after = await engineCreateOk(environmentId, [stack.id]);
    expect(before.status).toBe("waiting");
    expect([after.status, after.gate]).toEqual(["queued", null]);
    expect((await readDeployment(owner, before.id)).status).toBe("waiting");
  });

  it("only its own environment's protection counts", async () => {
    const { owner, project, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
    await lock(owner, environmentId);
    const other = await createEnvironment(project.id);
    const d = await engineCreateOk(other.id, [(await createStack(other.id)).id]);
    expect([d.status, d.gate]).toEqual(["queued", null]);
    expect((await engineCreateOk(environmentId, [stack.id])).status).toBe("waiting");
  });

  describe("every route's create", () => {
    it("POST /v1/environments/{id}/deployments: 201 waiting with its gate and created_by", async () => {
      const { owner, environmentId } = await protectedWorld({ required_approvals: 1, wait_timer: 120 });
      const res = await request<Deployment>("POST", `/v1/environments/${environmentId}/deployments`, {
        key: owner.key,
        body: { data: { patch: [] } },
      });
      expect(res.status, res.raw).toBe(201);
      expect(res.body).toMatchObject({
        status: "waiting",
        created_by: owner.accountId,
        gate: {
          required_approvals: 1,
          approvals: 0,
          wait_until: plusMs(res.body.created_at, 120_000),
          blocked_by: ["approval", "wait_timer"],
          checks: [],
        },
      });
      expect(await readDeployment(owner, res.body.id)).toEqual(res.body);
      // Its audit entry (§14) has the status and the gate its INSERT gave it.
      const { results } = await env.DB.prepare(
        "SELECT changes FROM audit_log WHERE action = 'createDeployment' AND target_id = ?",
      )
        .bind(res.body.id)
        .all<{ changes: string }>();
      expect(results.map((r) => JSON.parse(r.changes))).toEqual([
        expect.objectContaining({
          status: { from: null, to: "waiting" },
          gate: { from: null, to: res.body.gate },
          config: { from: null, to: res.body.config },
        }),
      ]);
    });

    it("redeploy: the new deployment waits, with a gate of its own; the original is untouched", async () => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      const original = await engineCreateOk(environmentId, [stack.id]);
      await reportOk(original.id, { status: "in_progress" });
      const succeeded = await reportOk(original.id, { status: "succeeded" });
      await protect(owner, environmentId, { required_approvals: 2 });
      const res = await redeploy(owner.key, original.id);
      expect(res.status, res.raw).toBe(201);
      expect(res.body).toMatchObject({
        status: "waiting",
        redeploy_of: original.id,
        created_by: owner.accountId,
        gate: { required_approvals: 2, approvals: 0, wait_until: null, blocked_by: ["approval"], checks: [] },
      });
      expect(await readDeployment(owner, original.id)).toEqual(succeeded);
    });

    it("redeploy of a waiting deployment waits too, and the original keeps waiting", async () => {
      const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
      const original = await engineCreateOk(environmentId, [stack.id]);
      const res = await redeploy(owner.key, original.id);
      expect(res.status, res.raw).toBe(201);
      expect(res.body.status).toBe("waiting");
      expect((await readDeployment(owner, original.id)).status).toBe("waiting");
    });

    it("promotion into a protected environment: 201 waiting; the source environment's protection does not count", async () => {
      const { owner, project } = await createOwnedProject();
      const source = project.default_environment_id;
      const target = (await createEnvironment(project.id, unique("prod"))).id;
      const from = await createStack(source, { template_id: "web" });
      await createStack(target, { template_id: "web" });
      const original = await engineCreateOk(source, [from.id]);
      await reportOk(original.id, { status: "in_progress" });
      await reportOk(original.id, { status: "succeeded" });
      await protect(owner, source, { required_approvals: 6, wait_timer: 86_400 });
      await protect(owner, target, { wait_timer: 60 });
      const res = await promote(owner.key, original.id, target);
      expect(res.status, res.raw).toBe(201);
      expect(res.body).toMatchObject({
        environment_id: target,
        status: "waiting",
        promoted_from: original.id,
        gate: {
          required_approvals: 0,
          approvals: 0,
          wait_until: plusMs(res.body.created_at, 60_000),
          blocked_by: ["wait_timer"],
          checks: [],
        },
      });
      // An unprotected target: queued, gate null.
      await protect(owner, target, {});
      const plain = await promote(owner.key, original.id, target);
      expect([plain.status, plain.body.status, plain.body.gate]).toEqual([201, "queued", null]);
    });

    it("each route's waiting deployment opens its timeline with `waiting`", async () => {
      const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
      const made = [
        await engineCreateOk(environmentId, [stack.id]),
        await publicCreateOk(owner, environmentId, [stack.id]),
      ];
      const again = await redeploy(owner.key, made[0]?.id ?? "");
      made.push(again.body);
      for (const d of made) {
        const entries = await timelineOf(owner.key, d.id);
        expect(entries).toHaveLength(1);
        expect(entries[0]).toMatchObject({ seq: 1, type: "status", stack_id: null, status: "waiting" });
      }
    });
  });
});

describe("settings changed later", () => {
  it("do not change a waiting deployment's required_approvals or wait_until, nor release it", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 3, wait_timer: 3600 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    await protect(owner, environmentId, { required_approvals: 1, wait_timer: 60 });
    const lower = await readDeployment(owner, d.id);
    expect(lower.status).toBe("waiting");
    expect(lower.gate).toEqual(d.gate);
    await protect(owner, environmentId, {});
    const off = await readDeployment(owner, d.id);
    expect(off.status).toBe("waiting");
    expect(off.gate).toEqual(d.gate);
    await protect(owner, environmentId, { required_approvals: 6, wait_timer: 86_400 });
    expect((await readDeployment(owner, d.id)).gate).toEqual(d.gate);
  });

  it("approvals still count against the deployment's own required_approvals after the setting dropped", async () => {
    const { owner, org, environmentId, stack } = await protectedWorld({ required_approvals: 2 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    await protect(owner, environmentId, { required_approvals: 1 });
    const first = await approve(owner, d.id);
    expect(first.status).toBe("waiting");
    expect(first.gate).toMatchObject({
      required_approvals: 2,
      approvals: 1,
      blocked_by: ["approval"],
      checks: [],
    });
    const admin = await createCaller(org, "admin");
    expect((await approve(admin, d.id)).status).toBe("queued");
  });

  it("a lock adds `lock` to a waiting deployment's blocked_by, an unlock takes it away", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1, wait_timer: 3600 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.gate?.blocked_by).toEqual(["approval", "wait_timer"]);
    await lock(owner, environmentId);
    const locked = await readDeployment(owner, d.id);
    expect(locked.gate).toEqual({ ...d.gate, blocked_by: ["approval", "wait_timer", "lock"] });
    await unlock(owner, environmentId);
    const unlocked = await readDeployment(owner, d.id);
    expect(unlocked.status).toBe("waiting");
    expect(unlocked.gate).toEqual(d.gate);
  });
});

describe("a waiting deployment", () => {
  it("is not in the engine's queued list; it is listed with status=waiting on the internal list", async () => {
    const { environmentId, stack } = await protectedWorld({ required_approvals: 1 });
    const elsewhere = await createProjectWithStack();
    const queuedElsewhere = await engineCreateOk(elsewhere.environmentId, [elsewhere.stack.id]);
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(await inEngineQueue(d)).toEqual([false]);
    // The list itself works: a queued deployment of an unprotected environment is in it.
    expect(await inEngineQueue(queuedElsewhere)).toEqual([true]);
    const waiting = await internal<Page>("GET", "/deployments?status=waiting&limit=240&sort_by=-created_at");
    expect(waiting.status, waiting.raw).toBe(200);
    expect(waiting.body.data.map((x) => x.id)).toContain(d.id);
    expect(waiting.body.data.every((x) => x.status === "waiting")).toBe(true);
  });

  it.each(["in_progress", "queued", "cancelled", "succeeded", "failed", "waiting"])(
    "an engine move of it to %s is 409; nothing changes",
    async (status) => {
      const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
      const d = await engineCreateOk(environmentId, [stack.id]);
      expectError(await engineMove(d.id, status), 409, "conflict");
      expect(await readDeployment(owner, d.id)).toEqual(d);
      expect(brief(await timelineOf(owner.key, d.id))).toEqual(["status:-:waiting"]);
    },
  );

  it("an engine report of its stacks is 409 too", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ wait_timer: 3600 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const res = await internal("PATCH", `/deployments/${d.id}`, {
      status: "in_progress",
      stacks: [{ id: stack.id, status: "in_progress" }],
    });
    expectError(res, 409, "conflict");
    expect(await readDeployment(owner, d.id)).toEqual(d);
  });

  it("cancel cancels it and every stack; the timeline records `cancelled` after `waiting`", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1, wait_timer: 3600 });
    const second = await createStack(environmentId);
    const d = await engineCreateOk(environmentId, [stack.id, second.id]);
    const res = await cancel(owner.key, d.id);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ id: d.id, status: "cancelled", started_at: null });
    expect(res.body.finished_at).toMatch(TS);
    expect(res.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled", "cancelled"]);
    expect(brief(await timelineOf(owner.key, d.id))).toEqual([
      "status:-:waiting",
      "status:-:cancelled",
      `status:${stack.id}:cancelled`,
      `status:${second.id}:cancelled`,
    ]);
    // Cancelled is final: a second cancel is 409, and nothing releases it later.
    expectError(await cancel(owner.key, d.id), 409, "conflict");
    expectError(await engineMove(d.id, "in_progress"), 409, "conflict");
  });

  it("the lists' status filter takes `waiting`: the three public lists, repeated or comma-separated, and `queued` leaves it out", async () => {
    const { owner, environmentId, stack } = await protectedWorld({});
    const queued = await engineCreateOk(environmentId, [stack.id]);
    await protect(owner, environmentId, { required_approvals: 1 });
    const waiting = await engineCreateOk(environmentId, [stack.id]);
    const lists = [
      `/v1/environments/${environmentId}/deployments`,
      `/v1/stacks/${stack.id}/deployments`,
      "/v1/deployments",
    ];
    for (const path of lists) {
      expect(await idsOf(owner.key, `${path}?status=waiting&limit=240`), path).toEqual([waiting.id]);
      expect(await idsOf(owner.key, `${path}?status=queued&limit=240`), path).toEqual([queued.id]);
      for (const both of ["status=waiting,queued", "status=queued&status=waiting"]) {
        expect(await idsOf(owner.key, `${path}?${both}&limit=240`), `${path} ${both}`).toEqual([
          waiting.id,
          queued.id,
        ]);
      }
      expect(await idsOf(owner.key, `${path}?limit=240`)).toEqual([waiting.id, queued.id]);
    }
    // An unknown status is still refused: the filter names its values.
    const unknown = expectError(
      await request("GET", "/v1/deployments?status=paused", { key: owner.key }),
      400,
      "bad_input",
    );
    expect(unknown.cause?.some((c) => c.path.startsWith("status"))).toBe(true);
  });

  it("a cursor made under status=waiting walks that filter", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push((await engineCreateOk(environmentId, [stack.id])).id);
      await sleep(3);
    }
    await protect(owner, environmentId, {});
    await engineCreateOk(environmentId, [stack.id]);
    const path = `/v1/environments/${environmentId}/deployments`;
    const first = await request<Page>("GET", `${path}?status=waiting&limit=2&sort_by=created_at`, {
      key: owner.key,
    });
    expect(first.body.data.map((d) => d.id)).toEqual(made.slice(0, 2));
    const next = await request<Page>(
      "GET",
      `${path}?status=waiting&limit=2&sort_by=created_at&after=${encodeURIComponent(first.body.next_page ?? "")}`,
      { key: owner.key },
    );
    expect(next.body.data.map((d) => d.id)).toEqual(made.slice(2));
    // Made under another filter: 400.
    expectError(
      await request(
        "GET",
        `${path}?status=queued&limit=2&sort_by=created_at&after=${encodeURIComponent(first.body.next_page ?? "")}`,
        { key: owner.key },
      ),
      400,
      "bad_input",
    );
  });

  it("keeps its environment from being deleted (§23): 409; deletable once it is cancelled", async () => {
    const { owner, project } = await createOwnedProject();
    const staging = await createEnvironment(project.id);
    const stack = await createStack(staging.id);
    await protect(owner, staging.id, { required_approvals: 1 });
    const d = await engineCreateOk(staging.id, [stack.id]);
    expectError(
      await request("DELETE", `/v1/environments/${staging.id}`, { key: owner.key }),
      409,
      "conflict",
    );
    await cancel(owner.key, d.id);
    expect((await request("DELETE", `/v1/environments/${staging.id}`, { key: owner.key })).status).toBe(204);
  });

  it("/wait answers it as not final once the timeout passes, and answers at once when a rejection ends it", async () => {
    const { owner, org, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const started = Date.now();
    const idle = await request<Deployment>("GET", `/v1/deployments/${d.id}/wait?timeout=1`, {
      key: owner.key,
    });
    expect(idle.status).toBe(200);
    expect(idle.body.status).toBe("waiting");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const waiting = request<Deployment>("GET", `/v1/deployments/${d.id}/wait?timeout=20`, { key: owner.key });
    await sleep(300);
    const admin = await createCaller(org, "admin");
    // A release is not the end: the wait goes on through `queued`…
    await approve(admin, d.id);
    await sleep(300);
    await reportOk(d.id, { status: "in_progress" });
    const done = await reportOk(d.id, { status: "succeeded" });
    const res = await waiting;
    expect(res.body).toEqual(done);
    // …and a rejection of another ends its wait at once.
    const other = await engineCreateOk(environmentId, [stack.id]);
    const rejectedWait = request<Deployment>("GET", `/v1/deployments/${other.id}/wait?timeout=20`, {
      key: owner.key,
    });
    await sleep(300);
    const at = Date.now();
    await approve(admin, other.id, "rejected");
    const rejected = await rejectedWait;
    expect(rejected.body.status).toBe("cancelled");
    expect(Date.now() - at).toBeLessThan(5000);
  });

  it("the live stream sends `waiting`, then `queued` on its release, and no `end` until it is final", async () => {
    const { owner, org, environmentId, stack } = await protectedWorld({ required_approvals: 1 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const stream = await openStream(`/v1/deployments/${d.id}/timeline`, owner.key);
    expect(stream.status).toBe(200);
    const [first] = await nextEntries(stream, 1);
    expect(first).toMatchObject({ seq: 1, status: "waiting", stack_id: null });
    await approve(await createCaller(org, "admin"), d.id);
    const [released] = await nextEntries(stream, 1);
    expect(released).toMatchObject({ seq: 2, type: "status", status: "queued", stack_id: null });
    await reportOk(d.id, { status: "in_progress" });
    await reportOk(d.id, { status: "succeeded" });
    const { entries, end } = await readToEnd(stream);
    expect(entries.filter((e) => e.stack_id === null).map((e) => e.status)).toEqual([
      "in_progress",
      "succeeded",
    ]);
    expect(end?.status).toBe("succeeded");
  });

  it("a stream of a waiting deployment that is cancelled ends with `cancelled`", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ wait_timer: 3600 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const stream = await openStream(`/v1/deployments/${d.id}/timeline`, owner.key);
    await nextEntries(stream, 1);
    await cancel(owner.key, d.id);
    const { entries, end } = await readToEnd(stream);
    expect(entries[0]).toMatchObject({ status: "cancelled", stack_id: null });
    expect(end?.status).toBe("cancelled");
  });
});

describe("the release", () => {
  it("on the last approval, in that request; the timeline records `queued`; the engine finds it and runs it", async () => {
    const { owner, org, environmentId, stack } = await protectedWorld({ required_approvals: 2 });
    const admin = await createCaller(org, "admin");
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect((await approve(owner, d.id)).status).toBe("waiting");
    expect(await inEngineQueue(d)).toEqual([false]);
    const released = await approve(admin, d.id);
    expect(released.status).toBe("queued");
    expect(released.gate?.blocked_by).toEqual([]);
    expect(await inEngineQueue(d)).toEqual([true]);
    expect(brief(await timelineOf(owner.key, d.id))).toEqual(["status:-:waiting", "status:-:queued"]);
    const running = await engineMove(d.id, "in_progress");
    expect(running.status, running.raw).toBe(200);
    expect(running.body.status).toBe("in_progress");
  });

  it("on an unlock, in that request: the deployments only the lock held are released; those still needing approval wait", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    await lock(owner, environmentId);
    const onlyLock = [
      await engineCreateOk(environmentId, [stack.id]),
      await engineCreateOk(environmentId, [stack.id]),
    ];
    await protect(owner, environmentId, { required_approvals: 1 });
    const needsApproval = await engineCreateOk(environmentId, [stack.id]);
    expect(needsApproval.gate?.blocked_by).toEqual(["approval", "lock"]);
    await unlock(owner, environmentId);
    for (const d of onlyLock) {
      const after = await readDeployment(owner, d.id);
      expect(after.status).toBe("queued");
      expect(after.gate?.blocked_by).toEqual([]);
      expect(brief(await timelineOf(owner.key, d.id))).toEqual(["status:-:waiting", "status:-:queued"]);
    }
    const still = await readDeployment(owner, needsApproval.id);
    expect(still.status).toBe("waiting");
    expect(still.gate?.blocked_by).toEqual(["approval"]);
    expect(await inEngineQueue(...onlyLock, needsApproval)).toEqual([true, true, false]);
  });

  it("when wait_until passes, within 5 s and without any request (D1 read directly)", async () => {
    const { environmentId, stack } = await protectedWorld({ wait_timer: 1 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const waitUntil = Date.parse(d.gate?.wait_until ?? "");
    expect(waitUntil).toBe(Date.parse(d.created_at) + 1000);
    // No request about it: only D1, polled.
    let released: number | undefined;
    await until(
      "released",
      async () => {
        const row = await rowOf(d.id);
        if (row.status === "queued") released = Date.now();
        return row.status === "queued";
      },
      9000,
    );
    expect((released ?? 0) - waitUntil).toBeLessThanOrEqual(5000);
    const row = await rowOf(d.id);
    expect(row.gate).toEqual({
      required_approvals: 0,
      approvals: 0,
      wait_until: d.gate?.wait_until,
      blocked_by: [],
      checks: [],
    });
    const entries = await statusEntriesInDb(d.id);
    expect(entries.map((e) => e.status)).toEqual(["waiting", "queued"]);
    const queuedAt = Date.parse(String(entries[1]?.created_at));
    expect(queuedAt).toBeGreaterThanOrEqual(waitUntil);
    expect(queuedAt - waitUntil).toBeLessThanOrEqual(5000);
  });

  it("a timer of 2 s: still waiting before wait_until, queued within 5 s after it; the engine then finds it", async () => {
    const { environmentId, stack } = await protectedWorld({ wait_timer: 2 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const waitUntil = Date.parse(d.gate?.wait_until ?? "");
    await sleep(Math.max(0, waitUntil - Date.now() - 700));
    expect((await rowOf(d.id)).status).toBe("waiting");
    await until("released", async () => (await rowOf(d.id)).status === "queued", 10_000);
    expect(Date.now() - waitUntil).toBeLessThanOrEqual(5500);
    expect(await inEngineQueue(d)).toEqual([true]);
  });

  it("a live stream sees `queued` arrive when the timer passes, with no other request", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ wait_timer: 1 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const stream = await openStream(`/v1/deployments/${d.id}/timeline`, owner.key);
    const [first] = await nextEntries(stream, 1);
    expect(first?.status).toBe("waiting");
    const [released] = await nextEntries(stream, 1, 9000);
    expect(released).toMatchObject({ seq: 2, type: "status", status: "queued", stack_id: null });
    expect(Date.now() - Date.parse(d.gate?.wait_until ?? "")).toBeLessThanOrEqual(7000);
    await stream.cancel();
  });

  it("a timer that passes while approvals are missing: blocked_by is [approval] alone, and the last approval releases it", async () => {
    const { owner, org, environmentId, stack } = await protectedWorld({
      required_approvals: 1,
      wait_timer: 1,
    });
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.gate?.blocked_by).toEqual(["approval", "wait_timer"]);
    // The timer's settling, without any request: blocked_by loses `wait_timer` within 5 s.
    const waitUntil = Date.parse(d.gate?.wait_until ?? "");
    await until(
      "settled by the timer",
      async () => !(await rowOf(d.id)).gate?.blocked_by.includes("wait_timer"),
      10_000,
    );
    expect(Date.now() - waitUntil).toBeLessThanOrEqual(5500);
    const after = await readDeployment(owner, d.id);
    expect(after.status).toBe("waiting");
    expect(after.gate?.blocked_by).toEqual(["approval"]);
    const released = await approve(await createCaller(org, "admin"), d.id);
    expect(released.status).toBe("queued");
  });

  it("approvals in before the timer passes: released by the timer, within 5 s, without any request", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ required_approvals: 1, wait_timer: 2 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    const approved = await approve(owner, d.id);
    expect(approved.status).toBe("waiting");
    expect(approved.gate?.blocked_by).toEqual(["wait_timer"]);
    const waitUntil = Date.parse(d.gate?.wait_until ?? "");
    await until("released", async () => (await rowOf(d.id)).status === "queued", 10_000);
    expect(Date.now() - waitUntil).toBeLessThanOrEqual(5500);
  });

  it("a timer that passes while the environment is locked: it waits on the lock alone; the unlock releases it", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ wait_timer: 1 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    await lock(owner, environmentId);
    const waitUntil = Date.parse(d.gate?.wait_until ?? "");
    await until(
      "settled by the timer",
      async () => !(await rowOf(d.id)).gate?.blocked_by.includes("wait_timer"),
      10_000,
    );
    expect(Date.now() - waitUntil).toBeLessThanOrEqual(5500);
    const row = await rowOf(d.id);
    expect(row.status).toBe("waiting");
    expect((await readDeployment(owner, d.id)).gate?.blocked_by).toEqual(["lock"]);
    await unlock(owner, environmentId);
    expect((await readDeployment(owner, d.id)).status).toBe("queued");
  });
  it("timers of one environment each release on time, the later one set first", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ wait_timer: 4 });
    const later = await engineCreateOk(environmentId, [stack.id]);
    await protect(owner, environmentId, { wait_timer: 1 });
    const sooner = await engineCreateOk(environmentId, [stack.id]);
    const soonerUntil = Date.parse(sooner.gate?.wait_until ?? "");
    const laterUntil = Date.parse(later.gate?.wait_until ?? "");
    expect(soonerUntil).toBeLessThan(laterUntil);
    await until("the sooner released", async () => (await rowOf(sooner.id)).status === "queued", 9000);
    expect(Date.now() - soonerUntil).toBeLessThanOrEqual(5500);
    if (Date.now() < laterUntil - 300) expect((await rowOf(later.id)).status).toBe("waiting");
    await until("the later released", async () => (await rowOf(later.id)).status === "queued", 12_000);
    expect(Date.now() - laterUntil).toBeLessThanOrEqual(5500);
  });

  it("timers in several environments at once all release", async () => {
    const worlds = await Promise.all(Array.from({ length: 4 }, () => protectedWorld({ wait_timer: 1 })));
    const made = await Promise.all(worlds.map((w) => engineCreateOk(w.environmentId, [w.stack.id])));
    for (const d of made) {
      await until(`${d.id} released`, async () => (await rowOf(d.id)).status === "queued", 9000);
      expect(Date.now() - Date.parse(d.gate?.wait_until ?? "")).toBeLessThanOrEqual(7000);
    }
  });

  it("a deployment cancelled before its timer passes stays cancelled: the timer releases nothing", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ wait_timer: 1 });
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect((await cancel(owner.key, d.id)).status).toBe(200);
    await sleep(Math.max(0, Date.parse(d.gate?.wait_until ?? "") + 2500 - Date.now()));
    expect((await rowOf(d.id)).status).toBe("cancelled");
    expect(brief(await timelineOf(owner.key, d.id))).toEqual([
      "status:-:waiting",
      "status:-:cancelled",
      `status:${stack.id}:cancelled`,
    ]);
  });
});

describe("the lock and the engine", () => {
  it("queued deployments leave the engine's queued list and cannot start (409); in_progress ones finish; after the unlock they are back", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const running = await engineCreateOk(environmentId, [stack.id]);
    await reportOk(running.id, { status: "in_progress" });
    const queued = [
      await engineCreateOk(environmentId, [stack.id]),
      await engineCreateOk(environmentId, [stack.id]),
    ];
    expect(await inEngineQueue(...queued)).toEqual([true, true]);
    await lock(owner, environmentId);
    expect(await inEngineQueue(...queued)).toEqual([false, false]);
    // Only the engine's queued list (§20's `?status=queued`) holds them back: they are still
    // `queued`, and every other list of the internal API shows them as they are.
    const since = new Date(Date.parse(running.created_at) - 1).toISOString();
    for (const [query, key] of [
      ["", ""],
      ["status=queued,failed&", "status=failed,queued"],
      ["status=queued&status=in_progress&", "status=in_progress,queued"],
    ]) {
      const after = encodeCursor("asc", key ?? "", since, "1111111111111111111111");
      const listed = await internal<{ data: Deployment[] }>(
        "GET",
        `/deployments?${query}limit=240&after=${encodeURIComponent(after)}`,
      );
      expect(listed.status, listed.raw).toBe(200);
      const shown = listed.body.data.filter((d) => queued.some((q) => q.id === d.id));
      expect(
        shown.map((d) => [d.id, d.status]),
        query,
      ).toEqual(queued.map((d) => [d.id, "queued"]));
    }
    for (const d of queued) {
      expectError(await engineMove(d.id, "in_progress"), 409, "conflict");
      const still = await readDeployment(owner, d.id);
      expect(still.status).toBe("queued");
      expect(still.started_at).toBeNull();
    }
    // Already in progress: it finishes, its stacks too.
    const finished = await engineMove(running.id, "succeeded");
    expect(finished.status, finished.raw).toBe(200);
    expect(finished.body.status).toBe("succeeded");
    await unlock(owner, environmentId);
    expect(await inEngineQueue(...queued)).toEqual([true, true]);
    expect((await engineMove(queued[0]?.id ?? "", "in_progress")).status).toBe(200);
  });

  it("an in_progress deployment may also fail or be cancelled while locked", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const a = await engineCreateOk(environmentId, [stack.id]);
    const b = await engineCreateOk(environmentId, [stack.id]);
    await reportOk(a.id, { status: "in_progress" });
    await reportOk(b.id, { status: "in_progress" });
    await lock(owner, environmentId);
    expect((await engineMove(a.id, "failed")).body.status).toBe("failed");
    expect((await cancel(owner.key, b.id)).body.status).toBe("cancelled");
  });

  it("a queued deployment can still be cancelled while locked", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = await engineCreateOk(environmentId, [stack.id]);
    await lock(owner, environmentId);
    const res = await cancel(owner.key, d.id);
    expect([res.status, res.body.status]).toEqual([200, "cancelled"]);
  });

  it("another environment of the project is not locked with it", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    const other = await createEnvironment(project.id);
    const d = await engineCreateOk(other.id, [(await createStack(other.id)).id]);
    await lock(owner, environmentId);
    expect(await inEngineQueue(d)).toEqual([true]);
    expect((await engineMove(d.id, "in_progress")).status).toBe(200);
  });
});

describe("concurrency", () => {
  it("parallel: several in_progress at once, and queued ones stay in the engine's list meanwhile", async () => {
    const { environmentId, stack } = await protectedWorld({ concurrency: "parallel" });
    const [a, b, c] = await three(environmentId, stack.id);
    expect((await engineMove(a.id, "in_progress")).status).toBe(200);
    expect(await inEngineQueue(b, c)).toEqual([true, true]);
    expect((await engineMove(b.id, "in_progress")).status).toBe(200);
    expect(await inEngineQueue(c)).toEqual([true]);
  });

  it("serial: while one is in_progress the others leave the engine's list and cannot start (409); when it ends they are back", async () => {
    const { owner, project, environmentId, stack } = await protectedWorld({ concurrency: "serial" });
    const [a, b, c] = await three(environmentId, stack.id);
    expect([a.status, b.status, c.status]).toEqual(["queued", "queued", "queued"]);
    expect(await inEngineQueue(a, b, c)).toEqual([true, true, true]);
    expect((await engineMove(a.id, "in_progress")).status).toBe(200);
    expect(await inEngineQueue(b, c)).toEqual([false, false]);
    for (const d of [b, c]) {
      expectError(await engineMove(d.id, "in_progress"), 409, "conflict");
      expect((await readDeployment(owner, d.id)).status).toBe("queued");
    }
    // Another environment of the project runs meanwhile.
    const other = await createEnvironment(project.id);
    const elsewhere = await engineCreateOk(other.id, [(await createStack(other.id)).id]);
    expect((await engineMove(elsewhere.id, "in_progress")).status).toBe(200);
    // Nothing is cancelled under serial.
    await reportOk(a.id, { status: "failed" });
    expect(await inEngineQueue(b, c)).toEqual([true, true]);
    expect((await engineMove(c.id, "in_progress")).status).toBe(200);
    expect(await inEngineQueue(b)).toEqual([false]);
    expectError(await engineMove(b.id, "in_progress"), 409, "conflict");
    await cancel(owner.key, c.id);
    expect((await engineMove(b.id, "in_progress")).status).toBe(200);
  });

  it("serial: a cancelled queued one does not matter; an in_progress one cancelled frees the environment", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ concurrency: "serial" });
    const a = await engineCreateOk(environmentId, [stack.id]);
    const b = await engineCreateOk(environmentId, [stack.id]);
    await reportOk(a.id, { status: "in_progress" });
    expectError(await engineMove(b.id, "in_progress"), 409, "conflict");
    await cancel(owner.key, a.id);
    expect((await engineMove(b.id, "in_progress")).status).toBe(200);
  });

  it("supersede: a deployment created queued cancels every older one still queued; the reason names the newer one; in_progress and final ones run on", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ concurrency: "supersede" });
    const running = await engineCreateOk(environmentId, [stack.id]);
    await reportOk(running.id, { status: "in_progress" });
    const done = await engineCreateOk(environmentId, [stack.id]);
    await reportOk(done.id, { status: "cancelled" });
    const older = [
      await engineCreateOk(environmentId, [stack.id]),
      await engineCreateOk(environmentId, [stack.id]),
    ];
    // Each create superseded the one before it; the newest stands.
    const newest = await publicCreateOk(owner, environmentId, [stack.id]);
    expect(newest.status).toBe("queued");
    for (const d of older) {
      const after = await readDeployment(owner, d.id);
      expect(after.status).toBe("cancelled");
      expect(after.data.stacks?.map((s) => s.status)).toEqual(["cancelled"]);
      const own = ownEntries(await timelineOf(owner.key, d.id));
      expect(own.map((e) => e.status)).toEqual(["queued", "cancelled"]);
    }
    const lastOlder = ownEntries(await timelineOf(owner.key, older[1]?.id ?? ""));
    expect(lastOlder[1]?.status_reason).toContain(newest.id);
    const firstOlder = ownEntries(await timelineOf(owner.key, older[0]?.id ?? ""));
    // The first was cancelled by the second's arrival, or the newest's: it names a newer one.
    expect([older[1]?.id, newest.id].some((id) => firstOlder[1]?.status_reason?.includes(id ?? "!"))).toBe(
      true,
    );
    expect((await readDeployment(owner, running.id)).status).toBe("in_progress");
    expect((await readDeployment(owner, done.id)).status).toBe("cancelled");
    expect((await readDeployment(owner, newest.id)).status).toBe("queued");
  });

  it("supersede: each queued create cancels exactly the one before it, naming itself", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ concurrency: "supersede" });
    const made: Deployment[] = [];
    for (let i = 0; i < 4; i++) {
      made.push(await engineCreateOk(environmentId, [stack.id]));
      await sleep(2);
    }
    for (let i = 0; i < 3; i++) {
      const own = ownEntries(await timelineOf(owner.key, made[i]?.id ?? ""));
      expect(own.map((e) => e.status)).toEqual(["queued", "cancelled"]);
      expect(own[1]?.status_reason).toContain(made[i + 1]?.id);
    }
    expect((await readDeployment(owner, made[3]?.id ?? "")).status).toBe("queued");
  });

  it("supersede: older waiting ones are cancelled too when a newer one enters queued", async () => {
    const { owner, environmentId, stack } = await protectedWorld({
      concurrency: "supersede",
      required_approvals: 1,
    });
    const waiting = await engineCreateOk(environmentId, [stack.id]);
    expect(waiting.status).toBe("waiting");
    await protect(owner, environmentId, { concurrency: "supersede" });
    const newer = await engineCreateOk(environmentId, [stack.id]);
    expect(newer.status).toBe("queued");
    const after = await readDeployment(owner, waiting.id);
    expect(after.status).toBe("cancelled");
    const own = ownEntries(await timelineOf(owner.key, waiting.id));
    expect(own.map((e) => e.status)).toEqual(["waiting", "cancelled"]);
    expect(own[1]?.status_reason).toContain(newer.id);
  });

  it("supersede: a newer deployment that is created waiting cancels nothing; its release does", async () => {
    const { owner, org, environmentId, stack } = await protectedWorld({ concurrency: "supersede" });
    const queued = await engineCreateOk(environmentId, [stack.id]);
    await protect(owner, environmentId, { concurrency: "supersede", required_approvals: 1 });
    const waitingOlder = await engineCreateOk(environmentId, [stack.id]);
    const newer = await engineCreateOk(environmentId, [stack.id]);
    expect([queued.status, waitingOlder.status, newer.status]).toEqual(["queued", "waiting", "waiting"]);
    expect((await readDeployment(owner, queued.id)).status).toBe("queued");
    expect((await readDeployment(owner, waitingOlder.id)).status).toBe("waiting");
    const released = await approve(await createCaller(org, "admin"), newer.id);
    expect(released.status).toBe("queued");
    for (const d of [queued, waitingOlder]) {
      const own = ownEntries(await timelineOf(owner.key, d.id));
      expect(own.at(-1)?.status).toBe("cancelled");
      expect(own.at(-1)?.status_reason).toContain(newer.id);
    }
  });

  it("supersede: a release of an older deployment leaves newer ones alone", async () => {
    const { owner, environmentId, stack } = await protectedWorld({
      concurrency: "supersede",
      required_approvals: 1,
    });
    const older = await engineCreateOk(environmentId, [stack.id]);
    const newer = await engineCreateOk(environmentId, [stack.id]);
    expect((await approve(owner, older.id)).status).toBe("queued");
    expect((await readDeployment(owner, newer.id)).status).toBe("waiting");
    expect((await approve(owner, newer.id)).status).toBe("queued");
    const own = ownEntries(await timelineOf(owner.key, older.id));
    expect(own.map((e) => e.status)).toEqual(["waiting", "queued", "cancelled"]);
    expect(own[2]?.status_reason).toContain(newer.id);
  });

  it("supersede: an unlock that releases several leaves only the newest queued, the others cancelled naming a newer one", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ concurrency: "supersede" });
    await lock(owner, environmentId);
    const made: Deployment[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(await engineCreateOk(environmentId, [stack.id]));
      await sleep(2);
    }
    expect(made.map((d) => d.status)).toEqual(["waiting", "waiting", "waiting"]);
    await unlock(owner, environmentId);
    const after = await Promise.all(made.map((d) => readDeployment(owner, d.id)));
    expect(after.map((d) => d.status)).toEqual(["cancelled", "cancelled", "queued"]);
    for (const d of made.slice(0, 2)) {
      const own = ownEntries(await timelineOf(owner.key, d.id));
      expect(own.at(-1)?.status).toBe("cancelled");
      const reason = own.at(-1)?.status_reason ?? "";
      expect(made.some((m) => m.created_at >= d.created_at && m.id !== d.id && reason.includes(m.id))).toBe(
        true,
      );
    }
  });

  it("supersede: a release by the wait timer cancels the older ones too", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ concurrency: "supersede" });
    const older = await engineCreateOk(environmentId, [stack.id]);
    await protect(owner, environmentId, { concurrency: "supersede", wait_timer: 1 });
    const newer = await engineCreateOk(environmentId, [stack.id]);
    expect(newer.status).toBe("waiting");
    await until("the newer released", async () => (await rowOf(newer.id)).status === "queued", 9000);
    await until("the older cancelled", async () => (await rowOf(older.id)).status === "cancelled", 3000);
    const own = ownEntries(await timelineOf(owner.key, older.id));
    expect(own.at(-1)?.status_reason).toContain(newer.id);
  });

  it("supersede is serial too: while one is in_progress, a queued one is out of the engine's list and cannot start", async () => {
    const { owner, environmentId, stack } = await protectedWorld({ concurrency: "supersede" });
    const a = await engineCreateOk(environmentId, [stack.id]);
    await reportOk(a.id, { status: "in_progress" });
    const b = await engineCreateOk(environmentId, [stack.id]);
    expect(await inEngineQueue(b)).toEqual([false]);
    expectError(await engineMove(b.id, "in_progress"), 409, "conflict");
    await reportOk(a.id, { status: "succeeded" });
    expect(await inEngineQueue(b)).toEqual([true]);
    expect((await engineMove(b.id, "in_progress")).status).toBe(200);
    expect((await readDeployment(owner, a.id)).status).toBe("succeeded");
  });
});

describe("the engine's list", () => {
  it("holds only what the engine may take now, across a lock, a serial environment and waiting deployments", async () => {
    const free = await createProjectWithStack();
    const serial = await protectedWorld({ concurrency: "serial" });
    const locked = await createProjectWithStack();
    const gated = await protectedWorld({ required_approvals: 1 });
    const a = await engineCreateOk(free.environmentId, [free.stack.id]);
    const running = await engineCreateOk(serial.environmentId, [serial.stack.id]);
    await reportOk(running.id, { status: "in_progress" });
    const heldBySerial = await engineCreateOk(serial.environmentId, [serial.stack.id]);
    const heldByLock = await engineCreateOk(locked.environmentId, [locked.stack.id]);
    await lock(locked.owner, locked.environmentId);
    const waiting = await engineCreateOk(gated.environmentId, [gated.stack.id]);
    const ids = new Set(await engineQueueSince(a.created_at));
    expect([a, heldBySerial, heldByLock, waiting].map((d) => ids.has(d.id))).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });
});

describe("an organization in the second database", () => {
  it("its wait timer releases within 5 s without a request, its lock and its approvals work as anywhere", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const project = await createProject(owner);
    const environmentId = project.default_environment_id;
    const stack = await createStack(environmentId);
    await protect(owner, environmentId, { wait_timer: 1 });
    const timed = await engineCreateOk(environmentId, [stack.id]);
    expect(timed.status).toBe("waiting");
    const statusIn2 = async (id: string) =>
      (
        await d1("DB_ORG_2").prepare("SELECT status FROM deployments WHERE id = ?").bind(id).first<{
          status: string;
        }>()
      )?.status;
    await until("released", async () => (await statusIn2(timed.id)) === "queued", 9000);
    expect(Date.now() - Date.parse(timed.gate?.wait_until ?? "")).toBeLessThanOrEqual(7000);
    await protect(owner, environmentId, { required_approvals: 1 });
    await lock(owner, environmentId);
    expect(await inEngineQueue(timed)).toEqual([false]);
    const gated = await engineCreateOk(environmentId, [stack.id]);
    expect(gated.gate?.blocked_by).toEqual(["approval", "lock"]);
    const admin = await createCaller(org, "admin");
    expect((await approve(admin, gated.id)).gate?.blocked_by).toEqual(["lock"]);
    await unlock(owner, environmentId);
    expect((await readDeployment(owner, gated.id)).status).toBe("queued");
    expect(await inEngineQueue(timed, gated)).toEqual([true, true]);
  });
});
