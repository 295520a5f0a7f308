/** The engine's side (API_CONTRACT §9): resources and deployments through /internal/v1, and their events. */

import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { deployments } from "../src/db/schema";
import { ApiError } from "../src/errors";
import type { DeploymentRecord } from "../src/schemas/deployment";
import { transitionDeployment } from "../src/services/deployments/transitions";
import { internal, internalOk, request } from "./helpers/api";
import { serviceContext } from "./helpers/context";
import { type ErrorBody, TS } from "./helpers/expect";
import { createEnvironment, createProjectWithStack, createStack, insertStacks } from "./helpers/factories";

type Resource = Record<string, unknown> & {
  id: string;
  status: string;
  status_reason: string | null;
  timestamp: string;
  updated_at: string;
};
type Deployment = DeploymentRecord;

const PATCH = [{ op: "add", path: "/services/web", value: { image: "web:1" } }];
const GIT = {
  commit: {
    author: { email: "ada@example.com", login: "ada", name: "Ada" },
    committer: { name: "GitHub" },
    message: "Ship it",
    sha: "0f3c2a1",
  },
  installation_id: "42",
  owner: "acme",
  provider: "github",
  pull_request: "17",
  ref: "refs/heads/main",
  repo: "storefront",
  repo_id: "9001",
};

const newResource = (stackId: string, fields: Record<string, unknown> = {}) =>
  internal<Resource & ErrorBody>("POST", `/stacks/${stackId}/resources`, {
    resource_type: "AWS::SQS::Queue",
    physical_id: "orders",
    status: "create_in_progress",
    ...fields,
  });

const newDeployment = (environmentId: string, body: Record<string, unknown>) =>
  internal<Deployment & ErrorBody>("POST", `/environments/${environmentId}/deployments`, body);

const report = (id: string, body: Record<string, unknown>) =>
  internal<Deployment & ErrorBody>("PATCH", `/deployments/${id}`, body);

/** The events the service recorded for one deployment, read straight from D1. */
async function eventsOf(deploymentId: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, project_id, type, data FROM events WHERE json_extract(data, '$.deployment.id') = ? ORDER BY rowid",
  )
    .bind(deploymentId)
    .all<{ id: string; project_id: string; type: string; data: string }>();
  return results.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
}

describe("POST /internal/v1/stacks/{stack_id}/resources", () => {
  it("creates a resource; template_id defaults to the stack's", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const res = await newResource(stack.id, { status_reason: "User Initiated" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      stack_id: stack.id,
      environment_id: environmentId,
      template_id: stack.template_id,
      status: "create_in_progress",
      status_reason: "User Initiated",
    });
    expect(res.body.timestamp).toMatch(TS);
    const own = await newResource(stack.id, { template_id: "a".repeat(32) });
    expect(own.body.template_id).toBe("a".repeat(32));
  });

  it.each([
    [{ status: "created" }, "status"],
    [{ resource_type: null }, "resource_type"],
    [{ physical_id: 7 }, "physical_id"],
    [{ colour: "red" }, "colour"],
    // §17: any string of 1–255 characters; only an empty or over-long one is refused.
    [{ template_id: "" }, "template_id"],
    [{ template_id: "t".repeat(256) }, "template_id"],
  ])("refuses %j with 400 naming %s", async (fields, path) => {
    const { stack } = await createProjectWithStack();
    const res = await newResource(stack.id, fields);
    expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    expect(res.body.cause?.map((c) => c.path)).toContain(path);
  });

  it("an unknown stack is 404; no token is 401", async () => {
    const res = await newResource("c".repeat(32));
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    const anon = await request<ErrorBody>("POST", `/internal/v1/stacks/${"c".repeat(32)}/resources`, {
      body: { resource_type: "x", physical_id: "y", status: "create_complete" },
    });
    expect([anon.status, anon.body.code]).toEqual([401, "unauthenticated"]);
  });
});

describe("PATCH /internal/v1/resources/{id}", () => {
  it("a new status moves timestamp and clears the old reason; the same status keeps both", async () => {
    const { owner, stack } = await createProjectWithStack();
    const created = (await newResource(stack.id, { status_reason: "starting" })).body;
    const same = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "create_in_progress",
      physical_id: "orders-v2",
    });
    expect(same).toMatchObject({
      status_reason: "starting",
      timestamp: created.timestamp,
      physical_id: "orders-v2",
    });
    expect(same.updated_at >= created.updated_at).toBe(true);
    const moved = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "create_complete",
    });
    expect(moved.status_reason).toBeNull();
    expect(moved.timestamp).toBe(moved.updated_at);
    expect(moved.timestamp >= created.timestamp).toBe(true);
    const reasoned = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "update_failed",
      status_reason: "quota",
    });
    expect(reasoned.status_reason).toBe("quota");
    const cleared = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "update_failed",
      status_reason: null,
    });
    expect(cleared).toMatchObject({ status_reason: null, timestamp: reasoned.timestamp });
    const read = await request<Resource>("GET", `/v1/resources/${created.id}`, { key: owner.key });
    expect(read.body).toEqual(cleared);
  });

  it("bad bodies are 400 and change nothing; an unknown resource is 404", async () => {
    const { stack } = await createProjectWithStack();
    const created = (await newResource(stack.id)).body;
    for (const body of [{}, { status: "gone" }, { status: "create_complete", extra: 1 }]) {
      const res = await internal<ErrorBody>("PATCH", `/resources/${created.id}`, body);
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    }
    // An engine's bare PATCH (no body, or an empty one labelled JSON): the status is missing.
    for (const headers of [{}, { "content-type": "application/json" }] as Record<string, string>[]) {
      const res = await request<ErrorBody>("PATCH", `/internal/v1/resources/${created.id}`, {
        rawBody: new Uint8Array(0),
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, ...headers },
      });
      expect([res.status, res.body.code], res.raw).toEqual([400, "bad_input"]);
      expect(res.body.cause).toEqual([{ path: "status", message: expect.any(String) }]);
    }
    const missing = await internal<ErrorBody>("PATCH", `/resources/${"d".repeat(32)}`, {
      status: "create_complete",
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    const after = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "create_in_progress",
    });
    expect(after.timestamp).toBe(created.timestamp);
  });
});

describe("POST /internal/v1/environments/{environment_id}/deployments", () => {
  it("creates a queued deployment with one queued entry per stack, and keeps the source", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const source = {
      git: GIT,
      registry: { image: "registry.example/web:1", command: ["serve", "--port=80"] },
    };
    const res = await newDeployment(environmentId, {
      stack_ids: [second.id, stack.id],
      data: { patch: PATCH, source },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "queued", stack_ids: [second.id, stack.id], started_at: null });
    expect(res.body.data).toEqual({
      patch: PATCH,
      source,
      stacks: [second.id, stack.id].map((id) => ({
        id,
        status: "queued",
        timestamp: expect.stringMatching(TS),
      })),
    });
    const read = await request<Deployment>("GET", `/v1/deployments/${res.body.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
  });

  it("takes any number of stacks (here 150: more than one statement's worth of bound parameters)", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    // 150 stacks of the environment, written straight to D1.
    const stackIds = await insertStacks(project.id, environmentId, 150);
    const res = await newDeployment(environmentId, { stack_ids: stackIds, data: { patch: PATCH } });
    expect(res.status, res.raw.slice(0, 300)).toBe(201);
    expect(res.body.data.stacks?.map((s) => s.id)).toEqual(stackIds);
    const last = stackIds[149] as string;
    const byStack = await request<{ data: Deployment[] }>("GET", `/v1/stacks/${last}/deployments`, {
      key: owner.key,
    });
    expect(byStack.body.data.map((d) => d.id)).toEqual([res.body.id]);
    // An engine reports all of them at once.
    const moved = await report(res.body.id, {
      status: "in_progress",
      stacks: stackIds.map((id) => ({ id, status: "in_progress" })),
    });
    expect(moved.status, moved.raw.slice(0, 300)).toBe(200);
    expect(new Set(moved.body.data.stacks?.map((s) => s.status))).toEqual(new Set(["in_progress"]));
  });

  it("takes a deployment of no stacks (stack_ids is an array; SPEC sets no minimum), and moves it", async () => {
    const { environmentId } = await createProjectWithStack();
    const res = await newDeployment(environmentId, { stack_ids: [], data: { patch: PATCH } });
    expect(res.status, res.raw).toBe(201);
    expect([res.body.stack_ids, res.body.data.stacks]).toEqual([[], []]);
    const done = await report(res.body.id, { status: "in_progress" });
    expect([done.status, done.body.status]).toEqual([200, "in_progress"]);
  });

  it("keeps patch items as the engine sends them: any path, and value or from left out", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    // SPEC.md types `path` and `from` as plain strings, `value` and `from` as optional.
    const patch = [
      { op: "replace", path: "spec.replicas", value: 3 },
      { op: "add", path: "image" },
      { op: "move", path: "/a ü~2" },
      { op: "copy", path: "", from: "not a pointer" },
      { op: "test", path: "/x", value: null },
    ];
    const res = await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch } });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.data.patch).toEqual(patch);
  });

  it("takes null for the source and its optional fields as not given", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const none = await newDeployment(environmentId, {
      stack_ids: [stack.id],
      data: { patch: PATCH, source: null },
    });
    expect(none.status, none.raw).toBe(201);
    expect(none.body.data).not.toHaveProperty("source");
    const git = {
      ...GIT,
      pull_request: null,
      commit: { ...GIT.commit, author: { name: "Ada", email: null } },
    };
    const res = await newDeployment(environmentId, {
      stack_ids: [stack.id],
      data: { patch: PATCH, source: { git } },
    });
    expect(res.status, res.raw).toBe(201);
    const { pull_request: _none, ...rest } = GIT;
    expect(res.body.data.source).toEqual({
      git: { ...rest, commit: { ...GIT.commit, author: { name: "Ada" } } },
    });
    // A required field is still required: null does not stand in for it.
    const bad = await newDeployment(environmentId, {
      stack_ids: [stack.id],
      data: { patch: PATCH, source: { git: { ...GIT, sha: undefined, repo: null } } },
    });
    expect([bad.status, bad.body.cause?.map((c) => c.path)]).toEqual([400, ["data.source.git.repo"]]);
  });

  it.each([
    [{ patch: [{ op: "merge", path: "/a", value: 1 }] }, "data.patch.0.op"],
    [{ patch: [{ op: "move", path: "/a", from: 7 }] }, "data.patch.0.from"],
    [{ patch: [{ op: "replace", value: 1 }] }, "data.patch.0.path"],
    [{ patch: [{ op: "remove", path: null }] }, "data.patch.0.path"],
    [{ patch: [{ op: "remove", path: "/a", extra: 1 }] }, "data.patch.0.extra"],
    [{ patch: PATCH, source: { git: { ...GIT, provider: "svn" } } }, "data.source.git.provider"],
    [{ patch: PATCH, source: { git: { ...GIT, commit: undefined } } }, "data.source.git.commit"],
    [{ patch: PATCH, source: { registry: { command: ["x"] } } }, "data.source.registry.image"],
    [{ patch: PATCH, stacks: [] }, "data.stacks"],
    [{}, "data.patch"],
  ])("refuses data %j with 400 naming %s", async (data, path) => {
    const { environmentId, stack } = await createProjectWithStack();
    const res = await newDeployment(environmentId, { stack_ids: [stack.id], data });
    expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    expect(res.body.cause?.map((c) => c.path)).toContain(path);
  });

  it("every stack must belong to the environment: 400 naming the others, nothing created", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const foreign = await createStack((await createEnvironment(project.id)).id);
    for (const stackIds of [
      [stack.id, foreign.id],
      [stack.id, "e".repeat(32)],
      [stack.id, stack.id],
      ["nope"],
    ]) {
      const res = await newDeployment(environmentId, { stack_ids: stackIds, data: { patch: PATCH } });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      expect(res.body.cause?.[0]?.path).toMatch(/^stack_ids/);
    }
    const list = await request<{ data: unknown[] }>("GET", `/v1/environments/${environmentId}/deployments`, {
      key: owner.key,
    });
    expect(list.body.data).toEqual([]);
    const missing = await newDeployment("f".repeat(32), { stack_ids: [stack.id], data: { patch: PATCH } });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });
});

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
});

describe("conditional requests on the internal API (API_CONTRACT §12)", () => {
  const asAdmin = (headers: Record<string, string> = {}) => ({
    authorization: `Bearer ${env.ADMIN_TOKEN}`,
    ...headers,
  });

  it("an engine's report answers the record's ETag, the same one a public read shows", async () => {
    const { owner, stack, environmentId } = await createProjectWithStack();
    const created = await newResource(stack.id);
    expect(created.status).toBe(201);
    const patched = await internal<Resource>("PATCH", `/resources/${created.body.id}`, {
      status: "create_complete",
    });
    const read = await request("GET", `/v1/resources/${created.body.id}`, { key: owner.key });
    expect(patched.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(patched.headers.get("etag")).toBe(read.headers.get("etag"));

    const deployment = await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } });
    expect(deployment.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    const moved = await report(deployment.body.id, { status: "in_progress" });
    const publicRead = await request("GET", `/v1/deployments/${deployment.body.id}`, { key: owner.key });
    expect(moved.headers.get("etag")).toBe(publicRead.headers.get("etag"));
  });

  it("If-Match on a resource report: a stale ETag is 409 and changes nothing; the current one applies", async () => {
    const { stack } = await createProjectWithStack();
    const created = await newResource(stack.id);
    const tag = created.headers.get("etag") ?? "";
    const first = await request<Resource>("PATCH", `/internal/v1/resources/${created.body.id}`, {
      body: { status: "create_complete" },
      headers: asAdmin({ "if-match": tag }),
    });
    expect(first.status, first.raw).toBe(200);
    // The same ETag again: the record has changed since.
    const stale = await request<ErrorBody>("PATCH", `/internal/v1/resources/${created.body.id}`, {
      body: { status: "delete_in_progress" },
      headers: asAdmin({ "if-match": tag }),
    });
    expect([stale.status, stale.body.code]).toEqual([409, "conflict"]);
    expect(stale.body.cause).toEqual([{ path: "header.if-match", message: expect.any(String) }]);
    const audit = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'internal.updateResource' AND target_id = ?",
    )
      .bind(created.body.id)
      .first<number>("n");
    expect(audit).toBe(1);
    const current = first.headers.get("etag") ?? "";
    const ok = await request<Resource>("PATCH", `/internal/v1/resources/${created.body.id}`, {
      body: { status: "delete_in_progress" },
      headers: asAdmin({ "if-match": `"nope", ${current}` }),
    });
    expect([ok.status, ok.body.status]).toEqual([200, "delete_in_progress"]);
    const missing = await request<ErrorBody>("PATCH", `/internal/v1/resources/${"d".repeat(32)}`, {
      body: { status: "create_complete" },
      headers: asAdmin({ "if-match": current }),
    });
    expect(missing.status).toBe(404);
  });

  it("a new API key is marked no-store and carries no ETag (the answer holds the key)", async () => {
    const { org, owner } = await createProjectWithStack();
    const res = await internal("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("etag")).toBeNull();
  });
});
