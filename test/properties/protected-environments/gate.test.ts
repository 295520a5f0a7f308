/**
 * Protected environments (API_CONTRACT §26, with §20, §23, §25): the gate a deployment gets when it
 * is created, through the real Worker, D1 and Durable Objects. Every route's create (internal,
 * public, redeploy, promotion) starts `waiting` where the protection, at that moment, requires
 * approvals, has a wait timer or is locked, with its `gate`; settings changed later leave a waiting
 * deployment's `required_approvals` and `wait_until` alone, and a lock or an unlock changes its
 * `blocked_by`. The other behaviours of protection are in the files beside this one; the routes'
 * own rules in test/routes/environments/*Protection*, *lock* and test/routes/deployments/*Review*;
 * races in test/properties/races/protection.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { reportOk, timelineOf } from "../../helpers/engine";
import { TS } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  createProjectWithStack,
  createStack,
  unique,
} from "../../helpers/factories";
import {
  approve,
  type Deployment,
  engineCreateOk,
  lock,
  plusMs,
  protect,
  protectedWorld,
  publicCreateOk,
  readDeployment,
  unlock,
} from "../../helpers/protection";

const redeploy = (key: string, id: string) =>
  request<Deployment>("POST", `/v1/deployments/${id}/redeploy`, { key, body: {} });

const promote = (key: string, id: string, environmentId: string) =>
  request<Deployment>("POST", `/v1/deployments/${id}/promote`, {
    key,
    body: { environment_id: environmentId },
  });

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
