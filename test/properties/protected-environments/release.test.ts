/**
 * Protected environments (API_CONTRACT §26): the release of a waiting deployment, through the
 * real Worker, D1 and Durable Objects: the last approval and an unlock in their request, the wait
 * timer within 5 s of `wait_until` without any request; and the same in an organization of the
 * second database.
 */
import { describe, expect, it } from "vitest";
import { createOrgWithOwnerIn, d1 } from "../../helpers/databases";
import { brief, timelineOf } from "../../helpers/engine";
import { createCaller, createProject, createProjectWithStack, createStack } from "../../helpers/factories";
import {
  approve,
  cancel,
  engineCreateOk,
  engineMove,
  inEngineQueue,
  lock,
  protect,
  protectedWorld,
  readDeployment,
  rowOf,
  statusEntriesInDb,
  unlock,
} from "../../helpers/protection";
import { nextEntries, openStream } from "../../helpers/sse";
import { sleep, until } from "../../helpers/wait";

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
