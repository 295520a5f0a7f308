import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../src/schemas/resource";
import { request } from "./helpers/api";
import { type ErrorBody, TS } from "./helpers/expect";
import {
  addProjectMember,
  type Caller,
  createCaller,
  createEnvironment,
  createProjectWithStack,
  createResource,
  createStack,
} from "./helpers/factories";
import { byCreated, walkPages } from "./helpers/pages";
import { runCommonRouteTests } from "./helpers/security";

type Resource = StackResourceRecord;
type List<T> = { data: T[]; has_more: boolean; next_page?: string };

/** Every id of a list, page by page; fails on a repeated id. */

describe("GET /v1/resources/{id} and its stack and environment forms", () => {
  it("reads the record the engine created, the same through all three paths", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const created = await createResource(stack.id, { status: "create_in_progress" });
    expect(created).toEqual({
      id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      stack_id: stack.id,
      environment_id: environmentId,
      template_id: stack.template_id,
      resource_type: "AWS::S3::Bucket",
      physical_id: created.physical_id,
      status: "create_in_progress",
      status_reason: null,
      timestamp: expect.stringMatching(TS),
      created_at: created.timestamp,
      updated_at: created.timestamp,
    });
    for (const path of [
      `/v1/resources/${created.id}`,
      `/v1/stacks/${stack.id}/resources/${created.id}`,
      `/v1/environments/${environmentId}/resources/${created.id}`,
    ]) {
      const res = await request<Resource>("GET", path, { key: owner.key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
    }
  });

  it("a resource reached through another stack or environment is 404", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const otherStack = await createStack(environmentId);
    const otherEnv = await createEnvironment(project.id);
    const resource = await createResource(stack.id);
    for (const path of [
      `/v1/stacks/${otherStack.id}/resources/${resource.id}`,
      `/v1/environments/${otherEnv.id}/resources/${resource.id}`,
      `/v1/resources/${"a".repeat(32)}`,
    ]) {
      const res = await request<ErrorBody>("GET", path, { key: owner.key });
      expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    }
  });

  it("malformed ids are 400 bad_input naming the parameter", async () => {
    const { owner, stack } = await createProjectWithStack();
    const bad = await request<ErrorBody>("GET", "/v1/resources/nope!", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
    expect(bad.body.cause?.map((c) => c.path)).toContain("id");
    const badStack = await request<ErrorBody>("GET", `/v1/stacks/x/resources/${stack.id}`, {
      key: owner.key,
    });
    expect(badStack.body.cause?.map((c) => c.path)).toContain("stack_id");
  });

  it("a project viewer reads; an org member outside the project gets 404", async () => {
    const { org, owner, project, stack } = await createProjectWithStack();
    const viewer = await createCaller(org, "member", owner);
    const outsider = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const resource = await createResource(stack.id);
    expect((await request("GET", `/v1/resources/${resource.id}`, { key: viewer.key })).status).toBe(200);
    const hidden = await request<ErrorBody>("GET", `/v1/resources/${resource.id}`, { key: outsider.key });
    expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
    const list = await request<ErrorBody>("GET", `/v1/stacks/${stack.id}/resources`, { key: outsider.key });
    expect([list.status, list.body.code]).toEqual([404, "not_found"]);
  });

  const readRoute =
    (make: (s: Awaited<ReturnType<typeof createProjectWithStack>>, r: Resource) => string) => async () => {
      const s = await createProjectWithStack();
      const resource = await createResource(s.stack.id);
      return { method: "GET", path: make(s, resource), caller: s.owner as Caller };
    };
  runCommonRouteTests(
    "GET /v1/resources/{id}",
    readRoute((_, r) => `/v1/resources/${r.id}`),
  );
  runCommonRouteTests(
    "GET /v1/stacks/{stack_id}/resources/{id}",
    readRoute((s, r) => `/v1/stacks/${s.stack.id}/resources/${r.id}`),
  );
  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/resources/{id}",
    readRoute((s, r) => `/v1/environments/${s.environmentId}/resources/${r.id}`),
  );
  runCommonRouteTests(
    "GET /v1/stacks/{stack_id}/resources",
    readRoute((s) => `/v1/stacks/${s.stack.id}/resources`),
  );
  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/resources",
    readRoute((s) => `/v1/environments/${s.environmentId}/resources`),
  );
});

describe("resource lists", () => {
  it("a stack lists its own resources; an environment those of all its stacks", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const elsewhere = await createStack((await createEnvironment(project.id)).id);
    const a = await createResource(stack.id);
    const b = await createResource(second.id);
    await createResource(elsewhere.id);
    const byStack = await request<List<Resource>>("GET", `/v1/stacks/${stack.id}/resources`, {
      key: owner.key,
    });
    expect(byStack.body).toEqual({ data: [a], has_more: false });
    const byEnv = await request<List<Resource>>("GET", `/v1/environments/${environmentId}/resources`, {
      key: owner.key,
    });
    expect(byEnv.body.data.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
    const empty = await request<List<Resource>>(
      "GET",
      `/v1/stacks/${(await createStack(environmentId)).id}/resources`,
      { key: owner.key },
    );
    expect(empty.body).toEqual({ data: [], has_more: false });
  });

  it.each(["created_at", "+created_at", "-created_at"])(
    "pages through both scopes under sort_by=%s with no repeats or gaps",
    async (sortBy) => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      const second = await createStack(environmentId);
      const made: Resource[] = [];
      for (let i = 0; i < 7; i++) made.push(await createResource(i % 2 ? second.id : stack.id));
      const ascending = [...made].sort(byCreated);
      const order = (rows: Resource[]) =>
        (sortBy === "-created_at" ? [...rows].reverse() : rows).map((r) => r.id);
      expect(await walkPages(owner.key, `/v1/environments/${environmentId}/resources`, sortBy, 2)).toEqual(
        order(ascending),
      );
      expect(await walkPages(owner.key, `/v1/stacks/${stack.id}/resources`, sortBy, 3)).toEqual(
        order(ascending.filter((r) => r.stack_id === stack.id)),
      );
    },
  );

  it("the default order is newest first; a cursor of another order, or garbage, is 400", async () => {
    const { owner, stack } = await createProjectWithStack();
    const made = [
      await createResource(stack.id),
      await createResource(stack.id),
      await createResource(stack.id),
    ];
    const first = await request<List<Resource>>("GET", `/v1/stacks/${stack.id}/resources?limit=2`, {
      key: owner.key,
    });
    expect(first.body.data.map((r) => r.id)).toEqual(
      [...made]
        .sort(byCreated)
        .reverse()
        .slice(0, 2)
        .map((r) => r.id),
    );
    const cursor = encodeURIComponent(first.body.next_page ?? "");
    const wrongOrder = await request<ErrorBody>(
      "GET",
      `/v1/stacks/${stack.id}/resources?sort_by=created_at&after=${cursor}`,
      { key: owner.key },
    );
    expect([wrongOrder.status, wrongOrder.body.code]).toEqual([400, "bad_input"]);
    const garbage = await request<ErrorBody>("GET", `/v1/stacks/${stack.id}/resources?after=bm9wZQ==`, {
      key: owner.key,
    });
    expect([garbage.status, garbage.body.code]).toEqual([400, "bad_input"]);
    for (const limit of ["0", "241", "x"]) {
      const res = await request<ErrorBody>("GET", `/v1/stacks/${stack.id}/resources?limit=${limit}`, {
        key: owner.key,
      });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    }
  });
});
