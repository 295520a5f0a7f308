/**
 * internalUpdateDeployment: PATCH /internal/v1/deployments/{id}, the engine's report of a
 * deployment's status and its stacks': the transitions, their events, the stack machine inside
 * a deployment, and reports racing each other.
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { deployments } from "../../../../src/db/schema";
import { ApiError } from "../../../../src/errors";
import type { DeploymentRecord } from "../../../../src/schemas/deployment";
import {
  MAX_DEPLOYMENT_DATA_BYTES,
  transitionDeployment,
} from "../../../../src/services/deployments/transitions";
import { internal, internalOk, request } from "../../../helpers/api";
import { serviceContext } from "../../../helpers/context";
import { deploy, eventsOf, newDeployment, PATCH, report } from "../../../helpers/engine";
import type { ErrorBody } from "../../../helpers/expect";
import {
  createDeployment,
  createProjectEnvironment,
  createProjectWithStack,
  createStack,
  insertStacks,
} from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

type Deployment = DeploymentRecord;
const long = (prefix: string, length: number) => prefix + "x".repeat(length - prefix.length);

describe("PATCH /internal/v1/deployments/{id}", () => {
  it("queued → in_progress → succeeded: timestamps, stacks and one event per transition", async () => {
    const { project, environmentId, stack } = await createProjectWithStack();
    const d = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
    const running = await report(d.id, {
      status: "in_progress",
      stacks: [{ id: stack.id, status: "in_progress" }],
    });
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ status: "in_progress", finished_at: null });
    expect(running.body.started_at).toBe(running.body.updated_at);
    expect(running.body.data.stacks).toEqual([
      { id: stack.id, status: "in_progress", timestamp: running.body.started_at },
    ]);
    // Staying in_progress while a stack finishes is progress, not a transition: no event.
    const progress = await report(d.id, {
      status: "in_progress",
      stacks: [{ id: stack.id, status: "succeeded", status_reason: "all healthy" }],
    });
    expect(progress.body.started_at).toBe(running.body.started_at);
    expect(progress.body.data.stacks?.[0]).toMatchObject({
      status: "succeeded",
      status_reason: "all healthy",
    });
    const done = await report(d.id, { status: "succeeded" });
    expect(done.body).toMatchObject({ status: "succeeded", started_at: running.body.started_at });
    expect(done.body.finished_at).toBe(done.body.updated_at);

    const events = await eventsOf(d.id);
    expect(events.map((e) => e.type)).toEqual(["deployment.in_progress", "deployment.succeeded"]);
    expect(events[0]?.project_id).toBe(project.id);
    expect(events[0]?.data).toEqual({ project_id: project.id, deployment: running.body });
    expect(events[1]?.data).toEqual({ project_id: project.id, deployment: done.body });
  });

  it("in_progress → failed records deployment.failed; cancelling records nothing", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const a = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
    await report(a.id, { status: "in_progress", stacks: [{ id: stack.id, status: "in_progress" }] });
    const failed = await report(a.id, {
      status: "failed",
      stacks: [{ id: stack.id, status: "failed", status_reason: "oom" }],
    });
    expect(failed.body.data.stacks?.[0]).toMatchObject({ status: "failed", status_reason: "oom" });
    expect((await eventsOf(a.id)).map((e) => e.type)).toEqual([
      "deployment.in_progress",
      "deployment.failed",
    ]);
    const b = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
    const cancelled = await report(b.id, { status: "cancelled" });
    expect(cancelled.body.data.stacks?.[0]?.status).toBe("cancelled");
    expect(await eventsOf(b.id)).toEqual([]);
  });

  it("illegal transitions are 409, change nothing and record no event", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
    for (const status of ["succeeded", "failed"]) {
      const res = await report(d.id, { status });
      expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    }
    const stackSkip = await report(d.id, {
      status: "in_progress",
      stacks: [{ id: stack.id, status: "queued" }],
    });
    expect(stackSkip.status).toBe(200);
    const backwards = await report(d.id, { status: "queued" });
    expect([backwards.status, backwards.body.code]).toEqual([409, "conflict"]);
    await report(d.id, { status: "succeeded" });
    for (const status of ["succeeded", "in_progress", "cancelled", "queued", "failed"]) {
      const res = await report(d.id, { status });
      expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    }
    const read = await request<Deployment>("GET", `/v1/deployments/${d.id}`, { key: owner.key });
    expect(read.body.status).toBe("succeeded");
    expect((await eventsOf(d.id)).map((e) => e.type)).toEqual([
      "deployment.in_progress",
      "deployment.succeeded",
    ]);
  });

  it("a stack may not move illegally, nor be a stranger to the deployment", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const other = await createStack(environmentId);
    const d = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
    const stranger = await report(d.id, {
      status: "in_progress",
      stacks: [{ id: other.id, status: "in_progress" }],
    });
    expect([stranger.status, stranger.body.code]).toEqual([400, "bad_input"]);
    expect(stranger.body.cause?.[0]?.path).toBe("stacks.0.id");
    const skip = await report(d.id, {
      status: "in_progress",
      stacks: [{ id: stack.id, status: "succeeded" }],
    });
    expect([skip.status, skip.body.code]).toEqual([409, "conflict"]);
    const dup = await report(d.id, {
      status: "in_progress",
      stacks: [
        { id: stack.id, status: "in_progress" },
        { id: stack.id, status: "in_progress" },
      ],
    });
    expect([dup.status, dup.body.code]).toEqual([400, "bad_input"]);
    expect(await eventsOf(d.id)).toEqual([]);
    const missing = await report("9".repeat(32), { status: "in_progress" });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  it("two transitions at once: one wins, the other is 409, and only the winner's event is written", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const running = async () => {
      const d = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
      await report(d.id, { status: "in_progress" });
      return d;
    };
    for (let round = 0; round < 3; round++) {
      // Either order of these two leaves the second illegal, so exactly one may succeed.
      const d = await running();
      const results = await Promise.all([
        report(d.id, { status: "succeeded" }),
        report(d.id, { status: "failed" }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = results[0].status === 200 ? "succeeded" : "failed";
      expect((await eventsOf(d.id)).map((e) => e.type)).toEqual([
        "deployment.in_progress",
        `deployment.${winner}`,
      ]);

      const e = await running();
      const mixed = await Promise.all([
        report(e.id, { status: "succeeded" }),
        request<Deployment>("PATCH", `/v1/deployments/${e.id}/cancel`, { key: owner.key }),
      ]);
      expect(mixed.map((r) => r.status).sort()).toEqual([200, 409]);
      const types = (await eventsOf(e.id)).map((x) => x.type);
      expect(types).toEqual(
        mixed[0].status === 200
          ? ["deployment.in_progress", "deployment.succeeded"]
          : ["deployment.in_progress"],
      );
    }
  });

  it("the same transition twice at once records its event once", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const d = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
    const twins = await Promise.all([
      report(d.id, { status: "in_progress" }),
      report(d.id, { status: "in_progress" }),
    ]);
    // The later one meets the deployment in_progress: a stay, which is legal (200, no event).
    expect(twins.map((r) => [r.status, r.body.status])).toEqual([
      [200, "in_progress"],
      [200, "in_progress"],
    ]);
    expect((await eventsOf(d.id)).map((x) => x.type)).toEqual(["deployment.in_progress"]);
  });

  it("stack reports racing each other all apply: a report is 409 only when illegal where it lands", async () => {
    const { environmentId } = await createProjectWithStack();
    const stacks = await Promise.all([
      createStack(environmentId),
      createStack(environmentId),
      createStack(environmentId),
    ]);
    const [a, b, c] = stacks.map((s) => s.id) as [string, string, string];
    for (let round = 0; round < 4; round++) {
      const d = (await newDeployment(environmentId, { stack_ids: [a, b, c], data: { patch: PATCH } })).body;
      await report(d.id, { status: "in_progress" });
      const results = await Promise.all([
        report(d.id, { status: "in_progress", stacks: [{ id: a, status: "in_progress" }] }),
        report(d.id, {
          status: "in_progress",
          stacks: [{ id: b, status: "failed", status_reason: "quota" }],
        }),
        report(d.id, { status: "in_progress", stacks: [{ id: c, status: "cancelled" }] }),
      ]);
      expect(
        results.map((r) => r.status),
        results.map((r) => r.raw).join("\n"),
      ).toEqual([200, 200, 200]);
      const final = await internalOk<Deployment>("PATCH", `/deployments/${d.id}`, { status: "in_progress" });
      expect(final.data.stacks?.map((s) => [s.id, s.status, s.status_reason])).toEqual([
        [a, "in_progress", undefined],
        [b, "failed", "quota"],
        [c, "cancelled", undefined],
      ]);
    }
  });

  it("thirty legal stack reports at once all apply (none 409s for the contention alone)", async () => {
    const { project, environmentId } = await createProjectWithStack();
    const ids = await insertStacks(project.id, environmentId, 30);
    const d = (await newDeployment(environmentId, { stack_ids: ids, data: { patch: PATCH } })).body;
    await report(d.id, { status: "in_progress" });
    const results = await Promise.all(
      ids.map((id) => report(d.id, { status: "in_progress", stacks: [{ id, status: "in_progress" }] })),
    );
    expect(
      results.filter((r) => r.status !== 200).map((r) => r.raw),
      "every report applies",
    ).toEqual([]);
    const final = await internalOk<Deployment>("PATCH", `/deployments/${d.id}`, { status: "in_progress" });
    expect(final.data.stacks?.every((s) => s.status === "in_progress")).toBe(true);
  });

  it("If-Match on an engine report applies to the version read or not at all", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const created = await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } });
    const tag = created.headers.get("etag") ?? "";
    const headers = { authorization: `Bearer ${env.ADMIN_TOKEN}`, "if-match": tag };
    const first = await request<Deployment>("PATCH", `/internal/v1/deployments/${created.body.id}`, {
      body: { status: "in_progress" },
      headers,
    });
    expect(first.status, first.raw).toBe(200);
    const stale = await request<ErrorBody>("PATCH", `/internal/v1/deployments/${created.body.id}`, {
      body: { status: "succeeded" },
      headers,
    });
    expect([stale.status, stale.body.cause?.[0]?.path]).toEqual([409, "header.if-match"]);
    expect((await eventsOf(created.body.id)).map((e) => e.type)).toEqual(["deployment.in_progress"]);
  });

  it("a transition computed from a stale read loses at the conditional update: 409, no event", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const d = (await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } })).body;
    await report(d.id, { status: "in_progress" });
    const db = createDb(env.DB);
    // The loser of a race is exactly this: it read the row before the winner wrote.
    const stale = await db.select().from(deployments).where(eq(deployments.id, d.id)).get();
    if (!stale) throw new Error("deployment row missing");
    await report(d.id, { status: "failed" });
    let thrown: unknown;
    try {
      await transitionDeployment(serviceContext({}, "internal.updateDeployment"), stale, "succeeded");
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).code).toBe("conflict");
    const staleStay = await transitionDeployment(
      serviceContext({}, "internal.updateDeployment"),
      stale,
      "in_progress",
    ).catch((err: unknown) => err);
    expect((staleStay as ApiError).code).toBe("conflict");
    expect((await eventsOf(d.id)).map((e) => e.type)).toEqual([
      "deployment.in_progress",
      "deployment.failed",
    ]);
    const row = await db.select().from(deployments).where(eq(deployments.id, d.id)).get();
    expect(row?.status).toBe("failed");
  });

  it("a stack's reason in a deployment is a free string; the deployment's data is bounded by its row", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const stacks = [stack, await createStack(environmentId), await createStack(environmentId)];
    const created = await internal<DeploymentRecord>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: stacks.map((s) => s.id),
      data: { patch: [] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const report = (stackId: string, reason: string) =>
      internal<DeploymentRecord & ErrorBody>("PATCH", `/deployments/${id}`, {
        status: "in_progress",
        stacks: [{ id: stackId, status: "in_progress", status_reason: reason }],
      });
    // Two reports of 40 % of the bound each are kept; the third would take the data past it.
    const share = Math.floor(MAX_DEPLOYMENT_DATA_BYTES * 0.4);
    const first = await report(stacks[0]?.id ?? "", long("a", share));
    expect(first.status).toBe(200);
    const second = await report(stacks[1]?.id ?? "", long("b", share));
    expect(second.status).toBe(200);
    expect(second.body.data.stacks?.map((s) => s.status_reason?.length)).toEqual([share, share, undefined]);

    const third = await report(stacks[2]?.id ?? "", long("c", share));
    expect([third.status, third.body.code]).toEqual([400, "bad_input"]);
    expect(third.body.cause?.map((c) => c.path)).toEqual(["stacks"]);
    const after = await request<DeploymentRecord>("GET", `/v1/deployments/${id}`, { key: owner.key });
    expect(after.status).toBe(200);
    expect(after.body.updated_at).toBe(second.body.updated_at);
    expect(after.body.data.stacks?.map((s) => s.status)).toEqual(["in_progress", "in_progress", "queued"]);
  });

  runInternalRouteTests("PATCH /internal/v1/deployments/{id}", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    return { method: "PATCH", path: `/internal/v1/deployments/${d.id}`, body: { status: "in_progress" } };
  });
});

describe("stack statuses inside a deployment (§17)", () => {
  it("a stack can fail before it starts; entering a final status finishes every unfinished stack", async () => {
    const { owner, environmentId } = await createProjectEnvironment();
    const [a, b, c] = [
      await createStack(environmentId),
      await createStack(environmentId),
      await createStack(environmentId),
    ];
    const d = await deploy(environmentId, [a.id, b.id, c.id]);
    const started = await report(d.id, {
      status: "in_progress",
      stacks: [
        { id: a.id, status: "failed", status_reason: "template invalid" },
        { id: b.id, status: "in_progress" },
      ],
    });
    expect(started.status).toBe(200);
    expect(started.body.data.stacks?.map((s) => s.status)).toEqual(["failed", "in_progress", "queued"]);

    const done = await report(d.id, { status: "succeeded" });
    expect(done.status).toBe(200);
    const stacks = done.body.data.stacks ?? [];
    expect(stacks.map((s) => [s.id, s.status])).toEqual([
      [a.id, "failed"],
      [b.id, "succeeded"],
      [c.id, "succeeded"],
    ]);
    // The failed stack keeps its own time and reason; the others moved when the deployment did.
    expect(stacks[0]).toEqual(started.body.data.stacks?.[0]);
    expect(stacks[0]?.status_reason).toBe("template invalid");
    expect(stacks[1]?.timestamp).toBe(done.body.finished_at);
    expect(stacks[2]?.timestamp).toBe(done.body.finished_at);

    const read = await request<Deployment>("GET", `/v1/deployments/${d.id}`, { key: owner.key });
    expect(read.body.data.stacks?.some((s) => s.status === "queued" || s.status === "in_progress")).toBe(
      false,
    );
  });

  it("a report that finishes the deployment may name that status for its unfinished stacks, with reasons", async () => {
    const { environmentId } = await createProjectEnvironment();
    const [a, b, c] = [
      await createStack(environmentId),
      await createStack(environmentId),
      await createStack(environmentId),
    ];
    const d = await deploy(environmentId, [a.id, b.id, c.id]);
    await report(d.id, { status: "in_progress", stacks: [{ id: b.id, status: "in_progress" }] });
    // a is still queued: queued → succeeded alone is no stack move, but it is the roll-up here.
    const done = await report(d.id, {
      status: "succeeded",
      stacks: [
        { id: a.id, status: "succeeded", status_reason: "nothing to change" },
        { id: b.id, status: "succeeded", status_reason: "applied" },
      ],
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data.stacks?.map((s) => [s.id, s.status, s.status_reason, s.timestamp])).toEqual([
      [a.id, "succeeded", "nothing to change", done.body.finished_at],
      [b.id, "succeeded", "applied", done.body.finished_at],
      [c.id, "succeeded", undefined, done.body.finished_at],
    ]);

    // Another final status for a queued stack than the deployment's is still judged alone.
    const e = await deploy(environmentId, [a.id, b.id]);
    await report(e.id, { status: "in_progress" });
    const mixed = await report(e.id, {
      status: "failed",
      stacks: [{ id: a.id, status: "succeeded" }],
    });
    expect([mixed.status, mixed.body.code]).toEqual([409, "conflict"]);
  });

  it("a failed deployment fails its queued and running stacks", async () => {
    const { environmentId } = await createProjectEnvironment();
    const [a, b] = [await createStack(environmentId), await createStack(environmentId)];
    const d = await deploy(environmentId, [a.id, b.id]);
    await report(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "in_progress" }] });
    const failed = await report(d.id, { status: "failed" });
    expect(failed.status).toBe(200);
    expect(failed.body.data.stacks?.map((s) => [s.status, s.timestamp])).toEqual([
      ["failed", failed.body.finished_at],
      ["failed", failed.body.finished_at],
    ]);
  });

  it("refuses stack moves outside the stack machine with 409, changing nothing", async () => {
    const { environmentId } = await createProjectEnvironment();
    const [a] = [await createStack(environmentId)];
    const d = await deploy(environmentId, [a.id]);
    await report(d.id, { status: "in_progress" });
    // queued → succeeded is not a stack move (a stack runs before it succeeds).
    const skip = await report(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "succeeded" }] });
    expect([skip.status, skip.body.code]).toEqual([409, "conflict"]);
    await report(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "in_progress" }] });
    const back = await report(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "queued" }] });
    expect([back.status, back.body.code]).toEqual([409, "conflict"]);
    const after = await internalOk<Deployment>("PATCH", `/deployments/${d.id}`, { status: "in_progress" });
    expect(after.data.stacks?.[0]?.status).toBe("in_progress");
  });
});
