/** internalCreateDeployment: POST /internal/v1/environments/{environment_id}/deployments, a queued deployment. */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../../src/schemas/deployment";
import { internal, request } from "../../../helpers/api";
import { GIT, newDeployment, PATCH, report } from "../../../helpers/engine";
import { type ErrorBody, TS } from "../../../helpers/expect";
import {
  createEnvironment,
  createProjectWithStack,
  createStack,
  insertStacks,
} from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

type Deployment = DeploymentRecord;
const long = (prefix: string, length: number) => prefix + "x".repeat(length - prefix.length);

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

  it("a deployment's source fields are free strings", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const source = {
      git: {
        commit: {
          author: { email: long("ada@", 2_000), name: long("Ada ", 2_000) },
          committer: { name: long("GitHub ", 1_500) },
          message: long("Ship it\n\n", 100_000),
          sha: long("0f3c2a1", 2_000),
        },
        installation_id: long("42", 1_500),
        owner: long("acme", 1_500),
        provider: "github",
        ref: long("refs/heads/feature/", 3_000),
        repo: long("storefront", 1_500),
        repo_id: long("9001", 1_500),
      },
      registry: {
        image: long("registry.example.com/", 5_000),
        command: Array.from({ length: 1_200 }, () => "run"),
      },
    };
    const created = await internal<DeploymentRecord>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: [stack.id],
      data: { patch: [], source },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.source).toEqual(source);
  });

  runInternalRouteTests("POST /internal/v1/environments/{environment_id}/deployments", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    return {
      method: "POST",
      path: `/internal/v1/environments/${environmentId}/deployments`,
      body: { stack_ids: [stack.id], data: { patch: PATCH } },
    };
  });
});

describe("a deployment's stack IDs", () => {
  it("any number that fits a deployment's row; past D1's row size the create is 400 and writes nothing", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    // 24,000 stacks of the environment, straight to D1 (32-hex IDs): their IDs and queued
    // entries take the deployment past MAX_DEPLOYMENT_DATA_BYTES.
    const ids = await insertStacks(project.id, environmentId, 24_000);
    const patch = [{ op: "add", path: "/a", value: 1 }];
    const tooMany = await internal<ErrorBody>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: ids,
      data: { patch },
    });
    expect([tooMany.status, tooMany.body.cause?.[0]?.path], tooMany.raw.slice(0, 300)).toEqual([
      400,
      "stack_ids",
    ]);
    const none = await request<{ data: unknown[] }>("GET", `/v1/environments/${environmentId}/deployments`, {
      key: owner.key,
    });
    expect(none.body.data).toEqual([]);
    // A thousand fit.
    const fits = await internal("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: ids.slice(0, 1000),
      data: { patch },
    });
    expect(fits.status, fits.raw.slice(0, 300)).toBe(201);
  });
});
