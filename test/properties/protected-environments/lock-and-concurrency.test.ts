/**
 * Protected environments (API_CONTRACT §26): where the engine takes work, through the real Worker,
 * D1 and Durable Objects: a lock keeps queued deployments from the engine, the concurrency
 * policies (`parallel`, `serial`, `supersede`) decide which it gets, and its queued list stays
 * what those rules leave.
 */
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../../../src/db/pagination";
import type { TimelineEntry } from "../../../src/schemas/timeline";
import { internal, request } from "../../helpers/api";
import { recordingD1 } from "../../helpers/d1-trips";
import { reportOk, timelineOf } from "../../helpers/engine";
import { expectError } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createProjectWithStack,
  createStack,
} from "../../helpers/factories";
import {
  approve,
  cancel,
  type Deployment,
  engineCreateOk,
  engineMove,
  engineQueueSince,
  inEngineQueue,
  lock,
  lockPath,
  protect,
  protectedWorld,
  publicCreateOk,
  readDeployment,
  rowOf,
  three,
  unlock,
} from "../../helpers/protection";
import { sleep, until } from "../../helpers/wait";

/** The deployment-level status entries of a timeline, with their reasons. */
const ownEntries = (entries: TimelineEntry[]) =>
  entries.filter((e) => e.type === "status" && e.stack_id === null);

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

  it("an unlock releases its environment's waiting deployments together: a read and a write for twenty, not each", async () => {
    const { owner, environmentId, stack } = await protectedWorld({});
    await lock(owner, environmentId);
    const made: Deployment[] = [];
    for (let i = 0; i < 25; i++) made.push(await engineCreateOk(environmentId, [stack.id]));
    expect(new Set(made.map((d) => d.status))).toEqual(new Set(["waiting"]));
    const recording = recordingD1();
    const res = await request("DELETE", lockPath(environmentId), {
      key: owner.key,
      bindings: { DB: recording.env.DB },
    });
    expect(res.status, res.raw).toBe(204);
    const after = await Promise.all(made.map((d) => readDeployment(owner, d.id)));
    expect(new Set(after.map((d) => d.status))).toEqual(new Set(["queued"]));
    // One by one, each would be a read and a write at least (≥ 50).
    expect(recording.trips.length).toBeLessThan(20);
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
