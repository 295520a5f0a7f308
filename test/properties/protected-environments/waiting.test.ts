/**
 * Protected environments (API_CONTRACT §26, with §3, §4, §19): a waiting deployment and the
 * engine (not in its queued list, every move `409`), its cancel, the lists' `status=waiting`, the
 * timeline, the live stream and `/wait`, through the real Worker, D1 and Durable Objects.
 */
import { describe, expect, it } from "vitest";
import { internal, request } from "../../helpers/api";
import { brief, reportOk, timelineOf } from "../../helpers/engine";
import { expectError, TS } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  createProjectWithStack,
  createStack,
} from "../../helpers/factories";
import {
  approve,
  cancel,
  type Deployment,
  engineCreateOk,
  engineMove,
  inEngineQueue,
  protect,
  protectedWorld,
  readDeployment,
} from "../../helpers/protection";
import { nextEntries, openStream, readToEnd } from "../../helpers/sse";
import { sleep } from "../../helpers/wait";

type Page = { data: Deployment[]; has_more: boolean; next_page?: string };

/** The ids on the first page (limit 240) of a list. */
async function idsOf(key: string, path: string): Promise<string[]> {
  const res = await request<Page>("GET", path, { key });
  expect(res.status, res.raw).toBe(200);
  return res.body.data.map((d) => d.id);
}

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
