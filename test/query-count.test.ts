/**
 * The work one request does, counted on the real bindings: D1 statements and round trips
 * (a batch is one round trip) and Durable Object calls, for the routes bench/ measures.
 * Counting wrappers delegate every call to the real D1 database and limiter objects.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import type { AdmitRequest, SettleRequest } from "../src/rate-limit/limiter";
import { internalOk } from "./helpers/api";
import { createOrgWithOwner, createProject } from "./helpers/factories";

type Counts = { d1Statements: number; d1RoundTrips: number; limiterCalls: number };

function countingBindings(counts: Counts): Env {
  const wrapStatement = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = {
      bind: (...values: unknown[]) => wrapStatement(stmt.bind(...values)),
      all: () => count(() => stmt.all()),
      raw: (options?: { columnNames?: boolean }) =>
        count(() => (options?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw())),
      run: () => count(() => stmt.run()),
      first: (column?: string) => count(() => (column === undefined ? stmt.first() : stmt.first(column))),
    };
    inner.set(wrapped, stmt);
    return wrapped as unknown as D1PreparedStatement;
  };
  const inner = new WeakMap<object, D1PreparedStatement>();
  const count = <T>(run: () => Promise<T>) => {
    counts.d1Statements++;
    counts.d1RoundTrips++;
    return run();
  };
  const db = {
    prepare: (query: string) => wrapStatement(env.DB.prepare(query)),
    batch: (statements: D1PreparedStatement[]) => {
      counts.d1Statements += statements.length;
      counts.d1RoundTrips++;
      return env.DB.batch(statements.map((s) => inner.get(s) ?? s));
    },
    exec: (query: string) => count(() => env.DB.exec(query)),
  };
  const limiter = {
    idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = env.RATE_LIMITER.get(id);
      return {
        admit: (request: AdmitRequest) => {
          counts.limiterCalls++;
          return stub.admit(request);
        },
        settle: (request: SettleRequest) => {
          counts.limiterCalls++;
          return stub.settle(request);
        },
      };
    },
  };
  return {
    ...env,
    DB: db as unknown as D1Database,
    RATE_LIMITER: limiter as unknown as Env["RATE_LIMITER"],
  };
}

async function measure(
  path: string,
  key?: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Counts & { status: number }> {
  const counts: Counts = { d1Statements: 0, d1RoundTrips: 0, limiterCalls: 0 };
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
  await waitOnExecutionContext(ctx); // includes the key's last_used_at refresh
  return { status: res.status, ...counts };
}

/** A key no request has used yet, so its first request is a cold authentication. */
async function freshKey(orgId: string, accountId: string): Promise<string> {
  const created = await internalOk<{ key: string }>("POST", `/orgs/${orgId}/api-keys`, {
    account_id: accountId,
    created_by: accountId,
  });
  return created.key;
}

describe("work per request of the benchmarked routes", () => {
  it("GET /healthz: nothing", async () => {
    expect(await measure("/healthz")).toEqual({
      status: 200,
      d1Statements: 0,
      d1RoundTrips: 0,
      limiterCalls: 0,
    });
  });

  it("GET /v1/projects/{id}: one limiter call; key lookup and last-use write only when the key is cold", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    const cold = await measure(`/v1/projects/${project.id}`, key);
    const warm = await measure(`/v1/projects/${project.id}`, key);
    expect(cold).toEqual({ status: 200, d1Statements: 3, d1RoundTrips: 3, limiterCalls: 1 });
    expect(warm).toEqual({ status: 200, d1Statements: 1, d1RoundTrips: 1, limiterCalls: 1 });
  });

  it("GET /v1/projects (a 20-item page): one limiter call, one query when the key is warm", async () => {
    const { owner } = await createOrgWithOwner();
    for (let i = 0; i < 21; i++) await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    const cold = await measure("/v1/projects", key);
    const warm = await measure("/v1/projects", key);
    expect(cold).toEqual({ status: 200, d1Statements: 3, d1RoundTrips: 3, limiterCalls: 1 });
    expect(warm).toEqual({ status: 200, d1Statements: 1, d1RoundTrips: 1, limiterCalls: 1 });
  });

  it("POST /v1/projects: one limiter call without Idempotency-Key; with one, a second call stores the answer, and a replay touches no table", async () => {
    const { owner } = await createOrgWithOwner();
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    const plain = await measure("/v1/projects", key, {
      method: "POST",
      body: JSON.stringify({ name: `p-${crypto.randomUUID()}` }),
    });
    expect(plain).toEqual({ status: 201, d1Statements: 3, d1RoundTrips: 1, limiterCalls: 1 });
    const body = JSON.stringify({ name: `p-${crypto.randomUUID()}` });
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await measure("/v1/projects", key, { method: "POST", body, headers });
    expect(first).toEqual({ status: 201, d1Statements: 3, d1RoundTrips: 1, limiterCalls: 2 });
    const replay = await measure("/v1/projects", key, { method: "POST", body, headers });
    expect(replay).toEqual({ status: 201, d1Statements: 0, d1RoundTrips: 0, limiterCalls: 1 });
  });

  it("GET /v1/projects/{id} answered 304 costs what the plain GET costs", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure(`/v1/projects/${project.id}`, key);
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
    expect(notModified).toEqual({ status: 304, d1Statements: 1, d1RoundTrips: 1, limiterCalls: 1 });
  });

  it("a failed authentication: one key lookup, one limiter call (anonymous)", async () => {
    expect(await measure("/v1/projects", `dpk_${"B".repeat(43)}`)).toEqual({
      status: 401,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
    });
  });
});
