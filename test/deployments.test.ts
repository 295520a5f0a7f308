import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../src/schemas/deployment";
import { internalOk, request } from "./helpers/api";
import type { ErrorBody } from "./helpers/expect";
import {
  addProjectMember,
  createCaller,
  createDeployment,
  createEnvironment,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
  createStack,
  DEPLOYMENT_PATCH,
} from "./helpers/factories";
import { openApiDocument, resolveParameters } from "./helpers/openapi";
import { byCreated, walkPages } from "./helpers/pages";
import { runCommonRouteTests } from "./helpers/security";

type Deployment = DeploymentRecord;
type List<T> = { data: T[]; has_more: boolean; next_page?: string };

function move(id: string, body: Record<string, unknown>) {
  return internalOk<Deployment>("PATCH", `/deployments/${id}`, body);
}

/** A deployment brought to `status` along legal moves. */
async function deployIn(environmentId: string, stackIds: string[], status: string): Promise<Deployment> {
  const d = await createDeployment(environmentId, stackIds);
  if (status === "queued") return d;
  if (status === "cancelled") return move(d.id, { status });
  const running = await move(d.id, { status: "in_progress" });
  return status === "in_progress" ? running : move(d.id, { status });
}

describe("GET /v1/deployments/{id} and /v1/environments/{environment_id}/deployments/{id}", () => {
  it("reads the record: top-level optionals null, optional keys of data omitted", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const created = await createDeployment(environmentId, [stack.id]);
    expect(created).toEqual({
      id: expect.any(String),
      environment_id: environmentId,
      stack_ids: [stack.id],
      status: "queued",
      data: {
        patch: DEPLOYMENT_PATCH,
        stacks: [{ id: stack.id, status: "queued", timestamp: created.created_at }],
      },
      started_at: null,
      finished_at: null,
      created_at: created.created_at,
      updated_at: created.created_at,
    });
    for (const path of [
      `/v1/deployments/${created.id}`,
      `/v1/environments/${environmentId}/deployments/${created.id}`,
    ]) {
      const res = await request<Deployment>("GET", path, { key: owner.key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
      expect("source" in res.body.data).toBe(false);
    }
  });

  it("another environment's path, an unknown id, or a malformed one: 404 / 400", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    const other = await createEnvironment(project.id);
    const wrong = await request<ErrorBody>("GET", `/v1/environments/${other.id}/deployments/${d.id}`, {
      key: owner.key,
    });
    expect([wrong.status, wrong.body.code]).toEqual([404, "not_found"]);
    const unknown = await request<ErrorBody>("GET", `/v1/deployments/${"b".repeat(32)}`, { key: owner.key });
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    const bad = await request<ErrorBody>("GET", "/v1/deployments/-", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });
});

describe("PATCH /v1/deployments/{id}/cancel", () => {
  it("cancels a queued deployment: finished_at set, started_at null, stacks cancelled", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const d = await createDeployment(environmentId, [stack.id, second.id]);
    const res = await request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(res.body.started_at).toBeNull();
    expect(res.body.finished_at).toBe(res.body.updated_at);
    expect(res.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled", "cancelled"]);
    expect(res.body.data.stacks?.[0]?.timestamp).toBe(res.body.finished_at);
    const read = await request<Deployment>("GET", `/v1/deployments/${d.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
  });

  it("cancels a running deployment, leaving finished stacks as they are", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const d = await createDeployment(environmentId, [stack.id, second.id]);
    await move(d.id, { status: "in_progress", stacks: [{ id: stack.id, status: "in_progress" }] });
    const partly = await move(d.id, {
      status: "in_progress",
      stacks: [{ id: stack.id, status: "succeeded", status_reason: "done" }],
    });
    const res = await request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body.started_at).toBe(partly.started_at);
    expect(res.body.data.stacks).toEqual([
      partly.data.stacks?.[0],
      { id: second.id, status: "cancelled", timestamp: res.body.finished_at },
    ]);
  });

  it.each(["succeeded", "failed", "cancelled"])(
    "a %s deployment is 409 conflict and unchanged",
    async (status) => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      const d = await deployIn(environmentId, [stack.id], status);
      const res = await request<ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, {
        key: owner.key,
      });
      expect([res.status, res.body.code]).toEqual([409, "conflict"]);
      expect((await request("GET", `/v1/deployments/${d.id}`, { key: owner.key })).body).toEqual(d);
    },
  );

  it("two cancels at once: exactly one 200, the other 409", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    for (let round = 0; round < 3; round++) {
      const d = await createDeployment(environmentId, [stack.id]);
      const results = await Promise.all([
        request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, { key: owner.key }),
        request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, { key: owner.key }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    }
  });

  it("contributors cancel; viewers are 403 forbidden; outsiders 404", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const [viewer, contributor, outsider] = [
      await createCaller(org, "member", owner),
      await createCaller(org, "member", owner),
      await createCaller(org, "member", owner),
    ];
    await addProjectMember(owner, project.id, viewer, "viewer");
    await addProjectMember(owner, project.id, contributor, "contributor");
    const d = await createDeployment(environmentId, [stack.id]);
    const denied = await request<ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: viewer.key,
    });
    expect([denied.status, denied.body.code]).toEqual([403, "forbidden"]);
    const hidden = await request<ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: outsider.key,
    });
    expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
    expect((await request("GET", `/v1/deployments/${d.id}`, { key: viewer.key })).status).toBe(200);
    const ok = await request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: contributor.key,
    });
    expect([ok.status, ok.body.status]).toEqual([200, "cancelled"]);
  });
});

describe("GET /v1/deployments", () => {
  it("org owners and admins see every project's; members only their projects'", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const other = await createProject(owner);
    const otherStack = await createStack(other.default_environment_id);
    const mine = await createDeployment(environmentId, [stack.id]);
    const theirs = await createDeployment(other.default_environment_id, [otherStack.id]);
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, member, "viewer");
    const stranger = await createOrgWithOwner();
    const strangerEnv = (await createProject(stranger.owner)).default_environment_id;
    const strangers = await createDeployment(strangerEnv, [(await createStack(strangerEnv)).id]);
    const ids = async (key: string) =>
      (await request<List<Deployment>>("GET", "/v1/deployments", { key })).body.data.map((d) => d.id);
    expect((await ids(owner.key)).sort()).toEqual([mine.id, theirs.id].sort());
    expect((await ids(admin.key)).sort()).toEqual([mine.id, theirs.id].sort());
    expect(await ids(member.key)).toEqual([mine.id]);
    expect(await ids(stranger.owner.key)).toEqual([strangers.id]);
  });

  runCommonRouteTests(
    "GET /v1/deployments",
    async () => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      await createDeployment(environmentId, [stack.id]);
      return { method: "GET", path: "/v1/deployments", caller: owner };
    },
    // Every caller has a (possibly empty) list of its own: a stranger gets 200, never the data.
    { otherOrgStatus: 200 },
  );
});

describe("deployment lists", () => {
  it("scopes: a stack lists the deployments that include it, an environment its own", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const both = await createDeployment(environmentId, [stack.id, second.id]);
    const onlySecond = await createDeployment(environmentId, [second.id]);
    const otherEnv = await createEnvironment(project.id);
    await createDeployment(otherEnv.id, [(await createStack(otherEnv.id)).id]);
    const list = async (path: string) =>
      (await request<List<Deployment>>("GET", path, { key: owner.key })).body.data.map((d) => d.id);
    expect(await list(`/v1/stacks/${stack.id}/deployments`)).toEqual([both.id]);
    expect(await list(`/v1/stacks/${second.id}/deployments?sort_by=created_at`)).toEqual(
      [both, onlySecond].sort(byCreated).map((d) => d.id),
    );
    expect((await list(`/v1/environments/${environmentId}/deployments`)).sort()).toEqual(
      [both.id, onlySecond.id].sort(),
    );
  });

  it.each(["created_at", "+created_at", "-created_at"])(
    "pages through every scope under sort_by=%s with no repeats or gaps",
    async (sortBy) => {
      const { org, owner, project, environmentId, stack } = await createProjectWithStack();
      const second = await createStack(environmentId);
      const otherEnv = await createEnvironment(project.id);
      const otherStack = await createStack(otherEnv.id);
      // A second project, so that /v1/deployments pages across projects as well.
      const elsewhere = (await createProject(owner)).default_environment_id;
      const elsewhereStack = await createStack(elsewhere);
      const made: Deployment[] = [];
      for (let i = 0; i < 9; i++) {
        made.push(
          i % 4 === 3
            ? await createDeployment(elsewhere, [elsewhereStack.id])
            : i % 3 === 2
              ? await createDeployment(otherEnv.id, [otherStack.id])
              : await createDeployment(environmentId, i % 2 ? [second.id] : [stack.id, second.id]),
        );
      }
      const asc = [...made].sort(byCreated);
      const order = (rows: Deployment[]) =>
        (sortBy === "-created_at" ? [...rows].reverse() : rows).map((d) => d.id);
      expect(await walkPages(owner.key, "/v1/deployments", sortBy, 2)).toEqual(order(asc));
      const member = await createCaller(org, "member", owner);
      await addProjectMember(owner, project.id, member, "viewer");
      const inProject = new Set([environmentId, otherEnv.id]);
      expect(await walkPages(member.key, "/v1/deployments", sortBy, 2)).toEqual(
        order(asc.filter((d) => inProject.has(d.environment_id))),
      );
      expect(await walkPages(owner.key, `/v1/environments/${environmentId}/deployments`, sortBy, 2)).toEqual(
        order(asc.filter((d) => d.environment_id === environmentId)),
      );
      expect(await walkPages(owner.key, `/v1/stacks/${second.id}/deployments`, sortBy, 2)).toEqual(
        order(asc.filter((d) => d.stack_ids.includes(second.id))),
      );
    },
  );

  it("status filter: repeated or comma-separated, compared as a set, bound to the cursor", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const made: Record<string, Deployment[]> = {};
    for (const status of [
      "queued",
      "failed",
      "cancelled",
      "succeeded",
      "failed",
      "cancelled",
      "in_progress",
    ]) {
      const d = await deployIn(environmentId, [stack.id], status);
      made[status] = [...(made[status] ?? []), d];
    }
    const wanted = [...(made.failed ?? []), ...(made.cancelled ?? [])]
      .sort(byCreated)
      .reverse()
      .map((d) => d.id);
    for (const path of [
      "/v1/deployments",
      `/v1/environments/${environmentId}/deployments`,
      `/v1/stacks/${stack.id}/deployments`,
    ]) {
      expect(await walkPages(owner.key, path, "-created_at", 3, "&status=failed,cancelled")).toEqual(wanted);
      expect(await walkPages(owner.key, path, "-created_at", 1, "&status=cancelled&status=failed")).toEqual(
        wanted,
      );
      const single = await request<List<Deployment>>("GET", `${path}?status=queued`, { key: owner.key });
      expect(single.body.data.map((d) => d.id)).toEqual(made.queued?.map((d) => d.id));

      const first = await request<List<Deployment>>("GET", `${path}?limit=1&status=failed,cancelled`, {
        key: owner.key,
      });
      const cursor = encodeURIComponent(first.body.next_page ?? "");
      // The same set in another spelling and order takes the cursor…
      const same = await request<List<Deployment>>(
        "GET",
        `${path}?limit=1&status=cancelled&status=failed&status=cancelled&after=${cursor}`,
        { key: owner.key },
      );
      expect(same.status).toBe(200);
      expect(same.body.data.map((d) => d.id)).toEqual([wanted[1]]);
      // …another set, or none, does not.
      for (const query of ["status=failed", "", "status=failed,cancelled,queued"]) {
        const res = await request<ErrorBody>("GET", `${path}?${query}&after=${cursor}`, { key: owner.key });
        expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      }
    }
  });

  it("unknown status values are 400 bad_input naming the field", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    for (const query of ["status=done", "status=failed,nope", "status=failed&status=", "status=FAILED"]) {
      const res = await request<ErrorBody>("GET", `/v1/environments/${environmentId}/deployments?${query}`, {
        key: owner.key,
      });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      expect(res.body.cause?.some((c) => c.path.startsWith("status"))).toBe(true);
    }
  });

  const listRoute =
    (make: (s: Awaited<ReturnType<typeof createProjectWithStack>>, d: Deployment) => string) => async () => {
      const s = await createProjectWithStack();
      const d = await createDeployment(s.environmentId, [s.stack.id]);
      return { method: "GET", path: make(s, d), caller: s.owner };
    };
  runCommonRouteTests(
    "GET /v1/deployments/{id}",
    listRoute((_, d) => `/v1/deployments/${d.id}`),
  );
  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/deployments/{id}",
    listRoute((s, d) => `/v1/environments/${s.environmentId}/deployments/${d.id}`),
  );
  runCommonRouteTests("PATCH /v1/deployments/{id}/cancel", async () => {
    const s = await createProjectWithStack();
    const d = await createDeployment(s.environmentId, [s.stack.id]);
    return { method: "PATCH", path: `/v1/deployments/${d.id}/cancel`, caller: s.owner };
  });
  runCommonRouteTests(
    "GET /v1/stacks/{stack_id}/deployments",
    listRoute((s) => `/v1/stacks/${s.stack.id}/deployments`),
  );
  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/deployments",
    listRoute((s) => `/v1/environments/${s.environmentId}/deployments`),
  );
});

describe("/openapi.json", () => {
  it("documents the deployment record's enums and the status filter", async () => {
    const doc = await openApiDocument();
    const schemas = doc.components.schemas ?? {};
    const json = JSON.stringify(schemas);
    expect(schemas.DeploymentStatus).toMatchObject({
      enum: ["queued", "in_progress", "succeeded", "failed", "cancelled"],
    });
    expect(json).toContain(JSON.stringify(["add", "remove", "replace", "move", "copy", "test"]));
    expect(json).toContain(JSON.stringify(["github", "gitlab", "bitbucket"]));
    expect(schemas.StackResourceStatus).toMatchObject({ enum: expect.arrayContaining(["create_complete"]) });
    const params = resolveParameters(doc, doc.paths["/v1/deployments"]?.get?.parameters ?? []);
    const status = params.find((p) => p.name === "status");
    expect(JSON.stringify(status)).toContain("DeploymentStatus");
  });
});
