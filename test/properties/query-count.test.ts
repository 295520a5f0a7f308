/**
 * The work one request does, counted on the real bindings: D1 statements and round trips
 * (a batch is one round trip) and Durable Object calls, for the routes bench/ measures, and
 * every GET of /v1 walked from /openapi.json (one round trip each, so a new read cannot add one).
 * Counting wrappers delegate every call to the real D1 database and limiter objects.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { FeedUpdate } from "../../src/feed/protocol";
import type { AdmitRequest, SettleRequest } from "../../src/rate-limit/limiter";
import type { StreamLeaseRequest } from "../../src/rate-limit/stream-leases";
import { internalOk, request } from "../helpers/api";
import { recordingD1 } from "../helpers/d1-trips";
import { postLogs, reportOk } from "../helpers/engine";
import {
  addProjectMember,
  type Caller,
  createCaller,
  createComponent,
  createDeployment,
  createEnvironment,
  createIntegration,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
  createResource,
  createStack,
} from "../helpers/factories";
import { createTrust } from "../helpers/oidc";
import { openApiDocument } from "../helpers/openapi";
import { nextEntries, openStream, readToEnd, until } from "../helpers/sse";

type Counts = {
  d1Statements: number;
  d1RoundTrips: number;
  limiterCalls: number;
  /** Where each D1 session the request opened started (`withSession`'s argument, modes only). */
  sessions: string[];
  /** Messages handed to the EVENTS queue (counted only when there are some). */
  queueMessages?: number;
  /** Calls to deployments' feed objects: notifications and subscriptions (counted only when there are some). */
  feedCalls?: number;
  /** A live stream's renewals and release of its place among its key family's (§33; counted only when there are some). */
  placeCalls?: { renew: number; release: number };
};

/** The real bindings, D1 recorded (../helpers/d1-trips.ts), the limiter, queue and feed calls counted. */
function countingBindings(counts: Counts): Env {
  const d1 = recordingD1(env, {
    session: (start) => counts.sessions.push(start.startsWith("first-") ? start : "bookmark"),
    trip: (trip) => {
      counts.d1RoundTrips++;
      counts.d1Statements += trip.sql.length;
    },
  });
  const limiter = {
    idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = env.RATE_LIMITER.get(id);
      return {
        admit: (request: AdmitRequest) => {
          counts.limiterCalls++;
          return stub.admit(request);
        },
        recordBookmark: (bookmark: string) => {
          counts.limiterCalls++;
          return stub.recordBookmark(bookmark);
        },
        settle: (request: SettleRequest) => {
          counts.limiterCalls++;
          return stub.settle(request);
        },
        renewStream: (request: StreamLeaseRequest) => {
          counts.placeCalls ??= { renew: 0, release: 0 };
          counts.placeCalls.renew++;
          return stub.renewStream(request);
        },
        releaseStream: (id: string) => {
          counts.placeCalls ??= { renew: 0, release: 0 };
          counts.placeCalls.release++;
          return stub.releaseStream(id);
        },
      };
    },
  };
  const sent = (n: number) => {
    counts.queueMessages = (counts.queueMessages ?? 0) + n;
  };
  const events = {
    send: (body: unknown, options?: QueueSendOptions) => {
      sent(1);
      return env.EVENTS.send(body, options);
    },
    sendBatch: (messages: Iterable<MessageSendRequest>, options?: QueueSendBatchOptions) => {
      const list = [...messages];
      sent(list.length);
      return env.EVENTS.sendBatch(list, options);
    },
  };
  const called = () => {
    counts.feedCalls = (counts.feedCalls ?? 0) + 1;
  };
  const feeds = {
    idFromName: (name: string) => env.DEPLOYMENT_FEED.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = env.DEPLOYMENT_FEED.get(id);
      return {
        notify: (update: FeedUpdate) => {
          called();
          return stub.notify(update);
        },
        fetch: (input: RequestInfo | URL, init?: RequestInit) => {
          called();
          return stub.fetch(input, init);
        },
      };
    },
  };
  return {
    ...d1.env,
    DEPLOYMENT_FEED: feeds as unknown as Env["DEPLOYMENT_FEED"],
    EVENTS: events as unknown as Queue,
    RATE_LIMITER: limiter as unknown as Env["RATE_LIMITER"],
  };
}

async function measure(
  path: string,
  key?: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Counts & { status: number }> {
  const counts: Counts = { d1Statements: 0, d1RoundTrips: 0, limiterCalls: 0, sessions: [] };
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { accept: "application/json", ...init.headers };
  if (key) headers["x-api-key"] = key;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await createApp().fetch(
    new Request(`http://api.test${path}`, { method: init.method ?? "GET", headers, body: init.body }),
    countingBindings(counts),
    ctx,
  );
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx); // includes the key's last_used_at write, when it makes one
  return { status: res.status, ...counts };
}

/** A key no request has used yet, so its first request is a cold authentication. */
async function freshKey(
  orgId: string,
  accountId: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const created = await internalOk<{ key: string }>("POST", `/orgs/${orgId}/api-keys`, {
    account_id: accountId,
    created_by: accountId,
    ...extra,
  });
  return created.key;
}

/** A project of `owner`'s with one deployment in its production environment. */
async function projectWithDeployment(owner: Caller) {
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  const stack = await createStack(environmentId);
  const deployment = await createDeployment(environmentId, [stack.id]);
  return { project, environmentId, stack: { id: stack.id, deploymentId: deployment.id } };
}

/** A list's status and the ids (or account ids) of its page, through the shared test request. */
async function list(path: string, key: string): Promise<{ status: number; ids: string[] }> {
  const res = await request<{ data?: { id?: string; account_id?: string }[] }>("GET", path, { key });
  return { status: res.status, ids: (res.body.data ?? []).map((item) => item.id ?? item.account_id ?? "") };
}

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

describe("work per change of a scope's variables (API_CONTRACT §18)", () => {
  /** A PATCH of `names` new variables of the environment, measured with a warm key. */
  async function measureChange(key: string, environmentId: string, names: number, prefix: string) {
    const variables = Object.fromEntries(
      Array.from({ length: names }, (_, i) => [`${prefix}${i}`, { type: "secret", value: `value-${i}` }]),
    );
    return measure(`/v1/environments/${environmentId}/variables`, key, {
      method: "PATCH",
      body: JSON.stringify({ variables }),
    });
  }

  it("a change of N names is one read and one batch whatever N: its statements do not grow with it", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    // The read (lookup, the scope's variables, its current version), then the batch: the version,
    // the audit entry, the variables (one statement) and the version's values (one statement).
    const write = {
      status: 200,
      d1Statements: 7,
      d1RoundTrips: 2,
      limiterCalls: 2,
      sessions: ["first-primary"],
    };
    expect(await measureChange(key, project.default_environment_id, 1, "ONE_")).toEqual(write);
    expect(await measureChange(key, project.default_environment_id, 500, "MANY_")).toEqual(write);
    // Updating and deleting in the same change adds one statement each, not one per name.
    const mixed = await measure(`/v1/environments/${project.default_environment_id}/variables`, key, {
      method: "PATCH",
      body: JSON.stringify({
        variables: Object.fromEntries(
          Array.from({ length: 400 }, (_, i) => [`MANY_${i}`, i % 2 ? null : { type: "string", value: "x" }]),
        ),
      }),
    });
    expect(mixed).toEqual({ ...write, d1Statements: 8 });
    // A dry run stops after the read.
    const dry = await measure(`/v1/environments/${project.default_environment_id}/variables`, key, {
      method: "PATCH",
      body: JSON.stringify({ variables: { MANY_0: null }, dry_run: true }),
    });
    expect(dry).toEqual({ ...write, d1Statements: 3, d1RoundTrips: 1 });
  });

  it("a single variable's create makes its version in its own batch: the scope's current version costs no read", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    const created = await measure(`/v1/environments/${project.default_environment_id}/variables`, key, {
      method: "POST",
      body: JSON.stringify({ name: "SINGLE", type: "secret", value: "v" }),
    });
    // The environment's lookup, then the variable, its version, the version's value, the entry.
    expect(created).toEqual({
      status: 201,
      d1Statements: 5,
      d1RoundTrips: 2,
      limiterCalls: 2,
      sessions: ["first-primary"],
    });
  });
});

describe("every read of /v1, walked from /openapi.json", () => {
  /** What a warm key's read costs: one limiter call, one session on a replica, one round trip. */
  const ONE_ROUND_TRIP = { d1RoundTrips: 1, limiterCalls: 1, sessions: ["first-unconstrained"] };
  /** The exception: a reveal records its audit entry (a write) before the value leaves (an export too). */
  const REVEALS = [
    "/v1/variables/{variable_id}/value",
    "/v1/environments/{environment_id}/variables/export",
    "/v1/components/{component_id}/variables/export",
  ];
  const WAIT = "/v1/deployments/{id}/wait";

  it("a warm key's GET is one D1 round trip (the lookup that authorizes it and its rows in one batch), and a hidden parent's 404 costs no more", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { project, environmentId, stack } = await projectWithDeployment(owner);
    const component = await createComponent(environmentId);
    const resource = await createResource(stack.id);
    // No flag on: the event below reaches no integration, so nothing is sent to a host name.
    const integration = await createIntegration(project.id, { configuration: {} });
    const event = await internalOk<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "changelog.created",
    });
    const variable = await request<{ id: string }>("POST", `/v1/environments/${environmentId}/variables`, {
      key: owner.key,
      body: { name: "COUNTED", type: "secret", value: "v" },
    });
    // Version 1 of the component's variables too (the environment's is the create above).
    await request("POST", `/v1/components/${component.id}/variables`, {
      key: owner.key,
      body: { name: "COUNTED", type: "string", value: "v" },
    });
    // Path parameters by name, and `{id}` by the collection segment before it.
    const ids: Record<string, string> = {
      org_id: org.id,
      project_id: project.id,
      environment_id: environmentId,
      component_id: component.id,
      stack_id: stack.id,
      member_id: owner.accountId,
      integration_id: integration.id,
      event_id: event.id,
      variable_id: variable.body.id,
      version: "1",
      resources: resource.id,
      deployments: stack.deploymentId,
      "api-keys": owner.keyId,
      "oidc-trusts": (await createTrust(owner)).id,
    };
    const fill = (template: string) =>
      template.replace(/\{(\w+)\}/g, (_, name: string, at: number) => {
        const collection =
          template
            .slice(0, at - 1)
            .split("/")
            .pop() ?? "";
        const id = name === "id" ? ids[collection] : ids[name];
        if (!id) throw new Error(`no id for {${name}} in ${template}`);
        return id;
      });
    const doc = await openApiDocument();
    const reads = Object.keys(doc.paths).filter((path) => path.startsWith("/v1/") && doc.paths[path]?.get);
    expect(reads.length).toBeGreaterThan(25);

    const key = await freshKey(org.id, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    for (const template of reads) {
      const expected =
        template === REVEALS[0]
          ? { ...ONE_ROUND_TRIP, d1Statements: 2, d1RoundTrips: 2 }
          : REVEALS.includes(template)
            ? // The lookup, the scope's variables (and its version, which the change shares) in one
              // batch; then the entry.
              { ...ONE_ROUND_TRIP, d1Statements: 4, d1RoundTrips: 2 }
            : ONE_ROUND_TRIP;
      // A wait on the (queued) deployment waits out its shortest timeout, still on one round trip.
      const path = template === WAIT ? `${fill(template)}?timeout=1` : fill(template);
      expect(await measure(path, key), template).toMatchObject({ status: 200, ...expected });
    }

    // Another organization's key: every read of a path with an id of this one is 404, at most as dear.
    const other = await createOrgWithOwner();
    const outsider = await freshKey(other.org.id, other.owner.accountId);
    await measure("/v1/projects", outsider); // warms the key
    for (const template of reads.filter((path) => path.includes("{"))) {
      const hidden = await measure(fill(template), outsider);
      expect(hidden.status, template).toBe(404);
      expect(hidden.d1RoundTrips, template).toBeLessThanOrEqual(1);
    }
  });
});

describe("following a deployment (API_CONTRACT §19): a live stream and a wait", () => {
  const fresh = (): Counts => ({ d1Statements: 0, d1RoundTrips: 0, limiterCalls: 0, sessions: [] });

  it("cost one D1 round trip and one subscription to open, then no query: not while idle, not for the changes pushed to them, not to end", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key

    const streamCounts = fresh();
    const stream = await openStream(`/v1/deployments/${deployment.id}/timeline`, key, {}, async (req) =>
      createApp().fetch(req, countingBindings(streamCounts), createExecutionContext()),
    );
    const openedAt = Date.now();
    await nextEntries(stream, 1);
    const waiting = measure(`/v1/deployments/${deployment.id}/wait?timeout=60`, key);
    // The lookup that authorizes it and the first entries in one batch; once they are sent, the
    // feed's subscription.
    const opened = { d1Statements: 2, d1RoundTrips: 1, limiterCalls: 1, feedCalls: 1 };
    // Idle: a keep-alive comment (at most 15 s apart), and no query meanwhile.
    expect(await stream.nextComment(15_000)).toBe(": keep-alive");
    expect(streamCounts).toMatchObject(opened);

    // Changes reach it with their entries: still no query.
    await postLogs(deployment.id, [{ message: "pushed, not read" }]);
    await reportOk(deployment.id, { status: "in_progress" });
    expect((await nextEntries(stream, 2)).map((e) => e.seq)).toEqual([2, 3]);
    const done = await reportOk(deployment.id, { status: "succeeded" });
    expect((await readToEnd(stream)).end).toEqual(done);
    const { placeCalls, ...rest } = streamCounts;
    expect(rest).toMatchObject(opened);
    // Its place among its key family's (§33): renewed every 5 s (a limiter call, no query), given back at the end.
    const renewals = Math.floor((Date.now() - openedAt) / 5000);
    expect(placeCalls?.renew).toBeGreaterThanOrEqual(renewals - 1);
    expect(placeCalls?.renew).toBeLessThanOrEqual(renewals + 1);
    await until("the place given back", async () => streamCounts.placeCalls?.release === 1);

    // The wait: its lookup, its subscription, and the final record pushed to it.
    expect(await waiting).toMatchObject({
      status: 200,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      feedCalls: 1,
    });
  });

  it("a stream or a wait of a final deployment reads once and never subscribes", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    await reportOk(deployment.id, { status: "cancelled" });
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    const once = { status: 200, d1RoundTrips: 1, limiterCalls: 1, sessions: ["first-unconstrained"] };
    const streamed = await measure(`/v1/deployments/${deployment.id}/timeline`, key, {
      headers: { accept: "text/event-stream" },
    });
    // Its place among its key family's (§33) is taken with the decision and given back as it ends.
    expect(streamed).toEqual({ ...once, d1Statements: 2, placeCalls: { renew: 0, release: 1 } });
    expect(await measure(`/v1/deployments/${deployment.id}/wait`, key)).toEqual({ ...once, d1Statements: 1 });
  });
});

describe("work per request of part four (API_CONTRACT §23–§26)", () => {
  const warmKey = async (owner: Caller) => {
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    return key;
  };
  const post = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });
  const write = { status: 201, limiterCalls: 2, sessions: ["first-primary"] };

  it("an environment read: two statements in one round trip (its lookup, and what current_deployment_id and config_pending need)", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await warmKey(owner);
    expect(await measure(`/v1/environments/${project.default_environment_id}`, key)).toEqual({
      status: 200,
      d1Statements: 2,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["first-unconstrained"],
    });
    // A list's page is the project's lookup and the page in one round trip, whatever its depth.
    for (let i = 0; i < 3; i++) await createEnvironment(project.id);
    expect(await measure(`/v1/projects/${project.id}/environments?limit=2`, key)).toMatchObject({
      status: 200,
      d1Statements: 2,
      d1RoundTrips: 1,
    });
  });

  it("a deployment started from the API: its read (the environment's lookup and the stacks) and one batch, as the engine's; a protected environment's gate adds no statement", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const key = await warmKey(owner);
    const cost = { ...write, d1RoundTrips: 2 };
    const free = await measure(
      `/v1/environments/${environmentId}/deployments`,
      key,
      post({ data: { patch: [] } }),
    );
    expect(free).toMatchObject(cost);
    const engine = await measure(`/internal/v1/environments/${environmentId}/deployments`, undefined, {
      ...post({ stack_ids: [stack.id], data: { patch: [] } }),
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expect(engine.d1RoundTrips).toBe(2);
    // The same create where the protection requires an approval: `waiting`, at the same cost.
    await request("PUT", `/v1/environments/${environmentId}/protection`, {
      key: owner.key,
      body: {
        required_approvals: 1,
        reviewer_role: "owner",
        prevent_self_review: false,
        wait_timer: 0,
        concurrency: "parallel",
      },
    });
    const gated = await measure(
      `/v1/environments/${environmentId}/deployments`,
      key,
      post({ data: { patch: [] } }),
    );
    expect(gated).toEqual({ ...free });
  });

  it("a promotion: one round trip of reads, then one batch (the deployment, its event, its audit entry)", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const target = await createEnvironment(project.id);
    await createStack(target.id, { template_id: stack.template_id });
    const original = await createDeployment(environmentId, [stack.id]);
    await reportOk(original.id, { status: "in_progress" });
    await reportOk(original.id, { status: "succeeded" });
    const key = await warmKey(owner);
    const promoted = await measure(
      `/v1/deployments/${original.id}/promote`,
      key,
      post({ environment_id: target.id }),
    );
    expect(promoted).toMatchObject({ ...write, d1RoundTrips: 2, queueMessages: 1 });
    const plan = await measure(
      `/v1/deployments/${original.id}/promote`,
      key,
      post({ environment_id: target.id, dry_run: true }),
    );
    // The plan's reads: the same round trip, then the names of both sides.
    expect(plan).toMatchObject({ status: 200, d1RoundTrips: 2 });
  });

  it("the engine's queued list stays one statement per database with a lock and `serial` in force", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    await createDeployment(environmentId, [stack.id]);
    const queued = () =>
      measure("/internal/v1/deployments?status=queued", undefined, {
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      });
    const plain = await queued();
    await request("PUT", `/v1/environments/${environmentId}/protection`, {
      key: owner.key,
      body: {
        required_approvals: 0,
        reviewer_role: "owner",
        prevent_self_review: true,
        wait_timer: 0,
        concurrency: "serial",
      },
    });
    await request("POST", `/v1/environments/${environmentId}/lock`, {
      key: owner.key,
      body: { reason: "counted" },
    });
    const held = await queued();
    expect(held.d1Statements).toBe(plain.d1Statements);
    expect(held.d1RoundTrips).toBe(plain.d1RoundTrips);
  });
});
