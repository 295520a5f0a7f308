/**
 * The work one request of the routes bench/ measures does, counted on the real bindings
 * (test/helpers/work-counts.ts): D1 statements and round trips (a batch is one round trip) and
 * Durable Object calls, warm and cold keys, reads and writes, 304s and failed authentications.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { request } from "../../helpers/api";
import {
  addProjectMember,
  createCaller,
  createDeployment,
  createEnvironment,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
} from "../../helpers/factories";
import {
  type Counts,
  countingBindings,
  freshKey,
  list,
  measure,
  projectWithDeployment,
} from "../../helpers/work-counts";

describe("work per request of the benchmarked routes", () => {
  it("GET /healthz: nothing", async () => {
    expect(await measure("/healthz")).toEqual({
      status: 200,
      d1Statements: 0,
      d1RoundTrips: 0,
      limiterCalls: 0,
      sessions: [],
    });
  });

  it("GET /v1/projects/{id}: one limiter call; the key lookup when the key is cold, its last-use write when its limiter says (the first use in 5 minutes)", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    const cold = await measure(`/v1/projects/${project.id}`, key);
    const warm = await measure(`/v1/projects/${project.id}`, key);
    // The lookup, the last-use write and the read each in a session of its own (the write on the
    // primary): no session of a cold key's read makes a second round trip (src/rate-limit/key-use.ts).
    expect(cold).toEqual({
      status: 200,
      d1Statements: 3,
      d1RoundTrips: 3,
      limiterCalls: 1,
      sessions: ["first-unconstrained", "first-primary", "first-unconstrained"],
    });
    expect(warm).toEqual({
      status: 200,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["first-unconstrained"],
    });
  });

  it("GET /v1/projects (a 20-item page): one limiter call, one query when the key is warm", async () => {
    const { owner } = await createOrgWithOwner();
    for (let i = 0; i < 21; i++) await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    const cold = await measure("/v1/projects", key);
    const warm = await measure("/v1/projects", key);
    // The lookup, the last-use write and the read each in a session of its own (the write on the
    // primary): no session of a cold key's read makes a second round trip (src/rate-limit/key-use.ts).
    expect(cold).toEqual({
      status: 200,
      d1Statements: 3,
      d1RoundTrips: 3,
      limiterCalls: 1,
      sessions: ["first-unconstrained", "first-primary", "first-unconstrained"],
    });
    expect(warm).toEqual({
      status: 200,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["first-unconstrained"],
    });
  });

  it("the lists behind a project or environment (members, an environment's deployments): the lookup and the page in one batch, whoever the caller, an empty page and a 404 included", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { project, environmentId, stack } = await projectWithDeployment(owner);
    const empty = await createEnvironment(project.id); // an environment without deployments
    const lists = [`/v1/projects/${project.id}/members`, `/v1/environments/${environmentId}/deployments`];
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const admin = await createCaller(org, "admin");
    // Every variant of the page's visibility test: the org role that sees every project or a
    // project membership, each with a key restricted to the project and without restriction.
    // Keys that have not written, so that their reads start on a replica (the key's bookmark).
    const callers = {
      owner: await freshKey(org.id, owner.accountId),
      "admin, restricted key": await freshKey(org.id, admin.accountId, { project_ids: [project.id] }),
      viewer: viewer.key,
      "viewer, restricted key": await freshKey(org.id, viewer.accountId, {
        project_ids: [project.id],
        created_by: owner.accountId,
      }),
    };
    for (const [who, key] of Object.entries(callers)) {
      await measure(lists[0] as string, key); // warms the key
      for (const path of lists) {
        const page = await list(path, key);
        expect(page.status, `${who}: ${path}`).toBe(200);
        expect(page.ids.length, `${who}: ${path}`).toBeGreaterThan(0);
        expect(await measure(path, key), `${who}: ${path}`).toEqual({
          status: 200,
          d1Statements: 2,
          d1RoundTrips: 1,
          limiterCalls: 1,
          sessions: ["first-unconstrained"],
        });
      }
      // An empty page costs the same.
      expect(await measure(`/v1/environments/${empty.id}/deployments`, key), who).toEqual({
        status: 200,
        d1Statements: 2,
        d1RoundTrips: 1,
        limiterCalls: 1,
        sessions: ["first-unconstrained"],
      });
    }
    expect((await list(lists[1] as string, owner.key)).ids).toEqual([stack.deploymentId]);

    // A project the caller cannot see answers 404, as if it did not exist, at the same cost.
    const other = await createOrgWithOwner();
    const elsewhere = await projectWithDeployment(other.owner);
    const outsider = await createCaller(org, "member", owner); // in the org, not in the project
    const unrestricted = await createProject(owner);
    const hidden = {
      "another organization's project": [callers.owner, elsewhere.project.id, elsewhere.environmentId],
      "a project the member is not in": [outsider.key, project.id, environmentId],
      "a project outside the key's restriction": [
        await freshKey(org.id, owner.accountId, { project_ids: [unrestricted.id] }),
        project.id,
        environmentId,
      ],
    } as const;
    for (const [what, [key, projectId, envId]] of Object.entries(hidden)) {
      await measure("/v1/projects", key); // warms the key
      for (const path of [`/v1/projects/${projectId}/members`, `/v1/environments/${envId}/deployments`]) {
        expect(await measure(path, key), `${what}: ${path}`).toEqual({
          status: 404,
          d1Statements: 2,
          d1RoundTrips: 1,
          limiterCalls: 1,
          sessions: ["first-unconstrained"],
        });
      }
    }
  });

  it("GET /v1/deployments (the org-wide list): one query when the key is warm", async () => {
    const { owner } = await createOrgWithOwner();
    await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/deployments", key); // warms the key
    expect(await measure("/v1/deployments", key)).toEqual({
      status: 200,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["first-unconstrained"],
    });
  });

  it("POST /v1/projects: two limiter calls without Idempotency-Key (the decision, the bookmark's store); with one, a third stores the answer, and a replay touches no table", async () => {
    const { owner } = await createOrgWithOwner();
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    const plain = await measure("/v1/projects", key, {
      method: "POST",
      body: JSON.stringify({ name: `p-${crypto.randomUUID()}` }),
    });
    // One batch: the project, its production environment, its creator's membership, the audit entry.
    const write = { status: 201, d1Statements: 4, d1RoundTrips: 1, sessions: ["first-primary"] };
    expect(plain).toEqual({ ...write, limiterCalls: 2 });
    const body = JSON.stringify({ name: `p-${crypto.randomUUID()}` });
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await measure("/v1/projects", key, { method: "POST", body, headers });
    // The claim rides on the decision's call; the bookmark's store and the answer's are one each.
    expect(first).toEqual({ ...write, limiterCalls: 3 });
    const replay = await measure("/v1/projects", key, { method: "POST", body, headers });
    // No D1 session at all: the replay answers before the session middleware.
    expect(replay).toEqual({ status: 201, d1Statements: 0, d1RoundTrips: 0, limiterCalls: 1, sessions: [] });
  });

  it("a deployment transition (internal API): one read, one batch (the conditional update, its audit entry, its event and its timeline entries), one queue message, one notification of its feed", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    const report = (status: string) =>
      measure(`/internal/v1/deployments/${deployment.id}`, undefined, {
        method: "PATCH",
        body: JSON.stringify({ status }),
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      });
    const cost = {
      status: 200,
      d1Statements: 5,
      d1RoundTrips: 2,
      limiterCalls: 0,
      sessions: ["first-primary"],
      queueMessages: 1,
      feedCalls: 1,
    };
    // The isolate's first request naming the deployment finds its database: one statement in each
    // organization database at once (src/middleware/internal-database.ts; DB's is counted here).
    expect(await report("in_progress")).toEqual({
      ...cost,
      d1Statements: 6,
      d1RoundTrips: 3,
      sessions: ["first-primary", "first-primary"],
    });
    // Known from then on: the engine's later reports cost the transition alone.
    expect(await report("succeeded")).toEqual(cost);
  });

  it("GET /v1/projects/{id} answered 304 costs what the plain GET costs", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    const plain = await measure(`/v1/projects/${project.id}`, key);
    expect(plain.status).toBe(200);
    const tag = (
      await createApp().fetch(
        new Request(`http://api.test/v1/projects/${project.id}`, { headers: { "x-api-key": key } }),
        env,
        createExecutionContext(),
      )
    ).headers.get("etag");
    const notModified = await measure(`/v1/projects/${project.id}`, key, {
      headers: { "if-none-match": tag ?? "" },
    });
    expect(notModified).toEqual({
      status: 304,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["first-unconstrained"],
    });
  });

  it("a scoped, project-restricted key costs no extra query: its scopes and projects ride on the cached key", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    await createProject(owner); // outside the restriction: filtered by the same one query
    const key = await freshKey(owner.orgId, owner.accountId, {
      scopes: ["projects:read", "deployments:read"],
      project_ids: [project.id],
    });
    for (const path of [`/v1/projects/${project.id}`, "/v1/projects"]) {
      const cold = await measure(path, key);
      const warm = await measure(path, key);
      expect(cold.status).toBe(200);
      // The same numbers as an unrestricted key's (the tests above).
      expect(warm).toEqual({
        status: 200,
        d1Statements: 1,
        d1RoundTrips: 1,
        limiterCalls: 1,
        sessions: ["first-unconstrained"],
      });
    }
    // A refused scope costs the limiter call only: nothing is read.
    expect(await measure(`/v1/projects/${project.id}/members`, key)).toEqual({
      status: 403,
      d1Statements: 0,
      d1RoundTrips: 0,
      limiterCalls: 1,
      sessions: [],
    });
  });

  it("a key made by a key (at any depth) costs what any key costs, cold and warm: no walk up its ancestors", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const fresh = await freshKey(owner.orgId, owner.accountId);
    let maker = fresh;
    for (let depth = 0; depth < 3; depth++) {
      maker = (await request<{ key: string }>("POST", "/v1/api-keys", { key: maker, body: {} })).body.key;
    }
    const path = `/v1/projects/${project.id}`;
    // The same numbers as any key's (the first test of this file). The route's session starts from
    // a bookmark: the family's object (API_CONTRACT §28) keeps the one of the writes that made the
    // keys, and hands it back with the same call.
    expect(await measure(path, maker)).toEqual({
      status: 200,
      d1Statements: 3,
      d1RoundTrips: 3,
      limiterCalls: 1,
      sessions: ["first-unconstrained", "first-primary", "bookmark"],
    });
    expect(await measure(path, maker)).toEqual({
      status: 200,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["bookmark"],
    });
  });

  it("a failed authentication: the key lookup on a replica, again on the primary, one limiter call (anonymous)", async () => {
    // The second lookup: a key created a moment ago may not have reached the replica yet.
    expect(await measure("/v1/projects", `dpk_${"B".repeat(43)}`)).toEqual({
      status: 401,
      d1Statements: 2,
      d1RoundTrips: 2,
      limiterCalls: 1,
      sessions: ["first-unconstrained", "first-primary"],
    });
  });

  it("a write runs on the primary and stores its bookmark (one more limiter call); the key's next read starts from it", async () => {
    const { owner } = await createOrgWithOwner();
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    const counts: Counts = { d1Statements: 0, d1RoundTrips: 0, limiterCalls: 0, sessions: [] };
    const exec = createExecutionContext();
    const res = await createApp().fetch(
      new Request("http://api.test/v1/projects", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ name: "counted-write" }),
      }),
      countingBindings(counts),
      exec,
    );
    const created = (await res.json()) as { id: string };
    await waitOnExecutionContext(exec);
    expect(res.status).toBe(201);
    // One batch (the project, its production environment, its creator's membership), then the
    // bookmark's store in the key's limiter object.
    // Plus the audit entry (API_CONTRACT §14), in the same batch.
    expect(counts).toEqual({
      d1Statements: 4,
      d1RoundTrips: 1,
      limiterCalls: 2,
      sessions: ["first-primary"],
    });
    const read = await measure(`/v1/projects/${created.id}`, key);
    expect(read).toEqual({
      status: 200,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["bookmark"],
    });
  });
});
