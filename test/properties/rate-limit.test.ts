/**
 * The rate limiter through the real Worker, the real Durable Object and real D1
 * (API_CONTRACT §7). The one deliberate fake is the broken limiter of the fail-open test.
 * Every request here runs with the production limits (the test configuration raises them for
 * the other files), so these tests exercise the real numbers.
 */
import { listDurableObjectIds, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { anonymousClient } from "../../src/lib/ip-address";
import { BOOKMARK_RETENTION_MS, readBookmark } from "../../src/rate-limit/bookmark";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import {
  type ApiResponse,
  request as apiRequest,
  brokenRateLimiter,
  forgetKeyUse,
  freshClientIp,
  limiterOf,
  PRODUCTION_LIMITS,
  type RequestOptions,
  restartObject,
} from "../helpers/api";
import { type Caller, createApiKey, createOrgWithOwner, createProject, unique } from "../helpers/factories";
import { captureLogs } from "../helpers/logs";

const HEADER_NAMES = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit-policy",
  "ratelimit",
] as const;

/** The rate-limit headers of a response, checked for internal consistency. */
function limits(res: ApiResponse, policy: string) {
  const limit = Number(res.headers.get("x-ratelimit-limit"));
  const remaining = Number(res.headers.get("x-ratelimit-remaining"));
  const reset = Number(res.headers.get("x-ratelimit-reset"));
  for (const name of HEADER_NAMES) expect(res.headers.get(name), name).toMatch(/\S/);
  expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
  expect(res.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
  // draft-ietf-httpapi-ratelimit-headers-11 syntax, with the same numbers.
  expect(res.headers.get("ratelimit-policy")).toBe(`"${policy}";q=${limit};w=60`);
  expect(res.headers.get("ratelimit")).toBe(`"${policy}";r=${remaining};t=${reset}`);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
  return { limit, remaining, reset };
}

function expectRefused(res: ApiResponse<unknown>, policy: string, limit: number) {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ code: "rate" });
  const l = limits(res, policy);
  expect(l).toMatchObject({ limit, remaining: 0 });
  expect(res.headers.get("retry-after")).toBe(String(l.reset));
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

const usageOf = (subject: string) =>
  runInDurableObject(limiterOf(subject), (instance: RateLimiter) => instance.usage());

/**
 * A request under the production limits. Unless the test names one, it comes from a client IP of
 * its own, so the `anonymous` window it may count against is this test's alone.
 */
const request = <T = unknown>(method: string, path: string, options: RequestOptions = {}) =>
  apiRequest<T>(method, path, {
    ...options,
    headers: { "cf-connecting-ip": freshClientIp(), ...options.headers },
    bindings: PRODUCTION_LIMITS,
  });

describe("default policy (100 / 60 s per key)", () => {
  it("admits 100 sequential requests with Remaining 99..0 and refuses the 101st with every header", async () => {
    const { owner } = await createOrgWithOwner();
    let previousReset = 60;
    for (let i = 0; i < 100; i++) {
      const res = await request("GET", "/v1/orgs", { key: owner.key });
      expect(res.status).toBe(200);
      const l = limits(res, "default");
      expect(l).toMatchObject({ limit: 100, remaining: 99 - i });
      // The oldest counted request is the first one: Reset can only count down.
      expect(l.reset).toBeLessThanOrEqual(previousReset);
      previousReset = l.reset;
      expect(res.headers.get("retry-after")).toBeNull();
    }
    const refused = await request("GET", "/v1/orgs", { key: owner.key });
    expectRefused(refused, "default", 100);
    // Refused requests do not count: still exactly 100 stored, and still refused.
    expectRefused(await request("GET", "/v1/projects", { key: owner.key }), "default", 100);
    expect(await usageOf(`key:${owner.keyId}`)).toEqual({ default: 100 });

    // Another key, even one acting as the same account, has its own window.
    const other = await createApiKey(owner);
    const res = await request("GET", "/v1/orgs", { key: other.key });
    expect(res.status).toBe(200);
    expect(limits(res, "default")).toMatchObject({ limit: 100, remaining: 99, reset: 60 });
  });

  it("of 150 concurrent requests on a fresh key admits exactly 100", async () => {
    const { owner } = await createOrgWithOwner();
    const responses = await Promise.all(
      Array.from({ length: 150 }, () => request("GET", "/v1/orgs", { key: owner.key })),
    );
    const admitted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(admitted).toHaveLength(100);
    expect(refused).toHaveLength(50);
    // Every admitted request saw its own slot: Remaining is a permutation of 0..99.
    const remaining = admitted.map((r) => limits(r, "default").remaining).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (const r of refused) expectRefused(r, "default", 100);
    expect(await usageOf(`key:${owner.keyId}`)).toEqual({ default: 100 });
  });

  it("counts requests that fail validation (400) and answer errors, with headers on them", async () => {
    const { owner } = await createOrgWithOwner();
    const invalidBody = await request("POST", "/v1/projects", { key: owner.key, body: { nope: true } });
    expect(invalidBody.status).toBe(400);
    expect(limits(invalidBody, "default").remaining).toBe(99);
    const invalidQuery = await request("GET", "/v1/projects?limit=0", { key: owner.key });
    expect(invalidQuery.status).toBe(400);
    expect(limits(invalidQuery, "default").remaining).toBe(98);
    const notJson = await request("POST", "/v1/projects", { key: owner.key, rawBody: "{" });
    expect(notJson.status).toBe(400);
    expect(limits(notJson, "default").remaining).toBe(97);
    const missing = await request("GET", "/v1/projects/7Hq3VnT5m2WcXbQ9pLk4Rz", { key: owner.key });
    expect(missing.status).toBe(404);
    expect(limits(missing, "default").remaining).toBe(96);
    expect(await usageOf(`key:${owner.keyId}`)).toEqual({ default: 4 });
  });

  it("puts the default headers on unknown /v1 paths called with a valid key", async () => {
    const { owner } = await createOrgWithOwner();
    for (const [method, path] of [
      ["GET", "/v1/no-such-thing"],
      ["DELETE", "/v1/orgs"],
      ["GET", "/v1"],
    ] as const) {
      const res = await request(method, path, { key: owner.key });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: "not_found" });
      limits(res, "default");
    }
    expect(await usageOf(`key:${owner.keyId}`)).toEqual({ default: 3 });
  });

  it("does not limit /openapi.json, /docs, /healthz or the internal API", async () => {
    for (const path of ["/openapi.json", "/docs", "/healthz"]) {
      const res = await request("GET", path);
      expect(res.status).toBe(200);
      for (const name of HEADER_NAMES) expect(res.headers.get(name)).toBeNull();
    }
    const res = await request("POST", "/internal/v1/orgs", {
      body: { name: unique("org") },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(201);
    for (const name of HEADER_NAMES) expect(res.headers.get(name)).toBeNull();
  });
});

describe("per-route policies", () => {
  it("reveal: 20 per minute on GET /v1/variables/{id}/value, separate from default", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const created = await request<{ id: string }>(
      "POST",
      `/v1/environments/${project.default_environment_id}/variables`,
      { key: owner.key, body: { name: "TOKEN", type: "secret", value: "s3cret" } },
    );
    expect(created.status).toBe(201);
    for (let i = 0; i < 20; i++) {
      const res = await request("GET", `/v1/variables/${created.body.id}/value`, { key: owner.key });
      expect(res.status).toBe(200);
      expect(limits(res, "reveal")).toMatchObject({ limit: 20, remaining: 19 - i });
    }
    expectRefused(
      await request("GET", `/v1/variables/${created.body.id}/value`, { key: owner.key }),
      "reveal",
      20,
    );
    // The variable record itself is a default-policy route: creating the project and the
    // variable were requests 1 and 2 of that window.
    const record = await request("GET", `/v1/variables/${created.body.id}`, { key: owner.key });
    expect(record.status).toBe(200);
    expect(limits(record, "default")).toMatchObject({ limit: 100, remaining: 97 });
    expect(await usageOf(`key:${owner.keyId}`)).toEqual({ default: 3, reveal: 20 });
  });

  it("orgs-create: 10 per minute on POST /v1/orgs", async () => {
    const { owner } = await createOrgWithOwner();
    for (let i = 0; i < 10; i++) {
      const res = await request("POST", "/v1/orgs", { key: owner.key, body: { name: unique("org") } });
      expect(res.status).toBe(201);
      expect(limits(res, "orgs-create")).toMatchObject({ limit: 10, remaining: 9 - i });
    }
    expectRefused(
      await request("POST", "/v1/orgs", { key: owner.key, body: { name: unique("org") } }),
      "orgs-create",
      10,
    );
    // Listing organizations is the default policy.
    const list = await request("GET", "/v1/orgs", { key: owner.key });
    expect(limits(list, "default")).toMatchObject({ remaining: 99 });
  });

  it("keys-create: 10 per minute on POST /v1/api-keys, refused ones making no key", async () => {
    const { owner } = await createOrgWithOwner();
    for (let i = 0; i < 10; i++) {
      const res = await request("POST", "/v1/api-keys", { key: owner.key, body: {} });
      expect(res.status).toBe(201);
      expect(limits(res, "keys-create")).toMatchObject({ limit: 10, remaining: 9 - i });
    }
    expectRefused(await request("POST", "/v1/api-keys", { key: owner.key, body: {} }), "keys-create", 10);
    // Reading keys is the default policy: 11 keys, the owner's and the 10 it made.
    const list = await request<{ data: unknown[] }>("GET", "/v1/api-keys", { key: owner.key });
    expect(limits(list, "default")).toMatchObject({ remaining: 99 });
    expect(list.body.data).toHaveLength(11);
  });

  it("publishes each operation's policy as x-rate-limit-policy in /openapi.json", async () => {
    type Operation = { operationId?: string; "x-rate-limit-policy"?: string };
    const doc = await request<{ paths: Record<string, Record<string, Operation>> }>("GET", "/openapi.json");
    const policies = new Map<string, string | undefined>();
    for (const [path, item] of Object.entries(doc.body.paths)) {
      for (const [method, op] of Object.entries(item)) {
        policies.set(`${method.toUpperCase()} ${path}`, op["x-rate-limit-policy"]);
      }
    }
    // The reveals: a value, and a scope's export (API_CONTRACT §18: one window with value reveals).
    const reveals = [
      "GET /v1/variables/{variable_id}/value",
      "GET /v1/environments/{environment_id}/variables/export",
      "GET /v1/components/{component_id}/variables/export",
    ];
    for (const reveal of reveals) expect(policies.get(reveal), reveal).toBe("reveal");
    expect(policies.get("POST /v1/orgs")).toBe("orgs-create");
    expect(policies.get("POST /v1/api-keys")).toBe("keys-create");
    expect(policies.get("POST /v1/oidc/token")).toBe("oidc-exchange");
    const named = ["POST /v1/orgs", "POST /v1/api-keys", "POST /v1/oidc/token"];
    for (const [operation, policy] of policies) {
      if (reveals.includes(operation) || named.includes(operation)) continue;
      expect(policy, operation).toBe("default");
    }
  });
});

describe("anonymous policy (60 / 60 s per client IP)", () => {
  it("counts failed authentications per CF-Connecting-IP and throttles key guessing", async () => {
    const ip = freshClientIp();
    for (let i = 0; i < 60; i++) {
      const key = i % 2 === 0 ? `dpk_${"A".repeat(43)}` : null;
      const res = await request("GET", "/v1/projects", { key, headers: { "cf-connecting-ip": ip } });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: "unauthenticated" });
      expect(limits(res, "anonymous")).toMatchObject({ limit: 60, remaining: 59 - i });
    }
    const refused = await request("GET", "/v1/unknown", {
      key: "not-a-key",
      headers: { "cf-connecting-ip": ip },
    });
    expectRefused(refused, "anonymous", 60);
    expect(await usageOf(`ip:${anonymousClient(ip)}`)).toEqual({ anonymous: 60 });

    // Another IP is independent, and a valid key from the throttled IP is not anonymous.
    const other = await request("GET", "/v1/projects", { headers: { "cf-connecting-ip": freshClientIp() } });
    expect(other.status).toBe(401);
    expect(limits(other, "anonymous").remaining).toBe(59);
    const { owner } = await createOrgWithOwner();
    const valid = await request("GET", "/v1/projects", {
      key: owner.key,
      headers: { "cf-connecting-ip": ip },
    });
    expect(valid.status).toBe(200);
    expect(limits(valid, "default").remaining).toBe(99);
  });
});

describe("anonymous policy: the internal API counts failed logins (§28)", () => {
  it("a wrong or missing admin token counts per client, in the /v1 window; a right one is never limited", async () => {
    const ip = freshClientIp();
    const wrong = (i: number) =>
      request("POST", "/internal/v1/orgs", {
        body: { name: unique("org") },
        headers: {
          "cf-connecting-ip": ip,
          ...(i % 2 === 0 ? { authorization: `Bearer ${env.ADMIN_TOKEN}x` } : {}),
        },
      });
    for (let i = 0; i < 60; i++) {
      const res = await wrong(i);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: "unauthenticated" });
      expect(limits(res, "anonymous")).toMatchObject({ limit: 60, remaining: 59 - i });
    }
    expectRefused(await wrong(60), "anonymous", 60);
    // One window per client: a /v1 request without a key from there is refused too.
    expectRefused(
      await request("GET", "/v1/projects", { headers: { "cf-connecting-ip": ip } }),
      "anonymous",
      60,
    );
    expect(await usageOf(`ip:${anonymousClient(ip)}`)).toEqual({ anonymous: 60 });

    // The right token from the throttled client: served, not counted, no rate-limit headers.
    const right = await request("POST", "/internal/v1/orgs", {
      body: { name: unique("org") },
      headers: { "cf-connecting-ip": ip, authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expect(right.status).toBe(201);
    for (const name of HEADER_NAMES) expect(right.headers.get(name)).toBeNull();
    expect(await usageOf(`ip:${anonymousClient(ip)}`)).toEqual({ anonymous: 60 });

    // Another client is unaffected.
    const other = await request("POST", "/internal/v1/orgs", {
      body: { name: unique("org") },
      headers: { "cf-connecting-ip": freshClientIp(), authorization: "Bearer wrong" },
    });
    expect(other.status).toBe(401);
    expect(limits(other, "anonymous").remaining).toBe(59);
  });
});

describe("anonymous policy: who a client is (§22)", () => {
  /** `n` failed authentications, each from the address `addressOf(i)`; their statuses. */
  const fail = async (n: number, addressOf: (i: number) => string) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await request("GET", "/v1/projects", { headers: { "cf-connecting-ip": addressOf(i) } });
      statuses.push(res.status);
    }
    return statuses;
  };
  const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

  it("an IPv6 client holds its whole /64: 70 addresses of one /64 share one window of 60", async () => {
    // A /64 of the documentation prefix no other test uses; the interface IDs vary in every group.
    const prefix = freshClientIp().split(":").slice(0, 4).join(":");
    const spellings = (i: number) =>
      [
        `${prefix}:${((i * 7919) & 0xffff).toString(16)}:${i.toString(16)}:1:${(i + 1).toString(16)}`,
        `${prefix.toUpperCase()}::${i.toString(16)}`,
        `[${prefix}:0:0:${i.toString(16)}:1]`,
      ][i % 3] as string;
    const statuses = await fail(70, spellings);
    expect([count(statuses, 401), count(statuses, 429)]).toEqual([60, 10]);
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(await usageOf(`ip:${prefix}::/64`)).toEqual({ anonymous: 60 });

    // The neighbouring /64 is another client.
    const [a, b, c, d] = prefix.split(":") as [string, string, string, string];
    const next = `${a}:${b}:${c}:${(Number.parseInt(d, 16) ^ 1).toString(16)}::1`;
    const other = await request("GET", "/v1/projects", { headers: { "cf-connecting-ip": next } });
    expect([other.status, other.headers.get("x-ratelimit-remaining")]).toEqual([401, "59"]);
  });

  it("an IPv4 client is its own address, however a dual-stack socket spells it", async () => {
    const [x = 0, y = 0] = crypto.getRandomValues(new Uint8Array(2));
    // The benchmarking range (RFC 2544), one address no other test uses.
    const address = `198.18.${x}.${y}`;
    const mapped = (i: number) => (i % 2 === 0 ? address : `::ffff:${address}`);
    expect(await fail(61, mapped)).toEqual([...Array(60).fill(401), 429]);
    // Its neighbour (the same /24, the same /64 of mapped space) is another client.
    const neighbour = `::ffff:198.18.${x}.${(y + 1) % 256}`;
    const other = await request("GET", "/v1/projects", { headers: { "cf-connecting-ip": neighbour } });
    expect([other.status, other.headers.get("x-ratelimit-remaining")]).toEqual([401, "59"]);
    expect(await usageOf(`ip:${address}`)).toEqual({ anonymous: 60 });
  });
});

describe("durability and storage", () => {
  it("keeps the window across eviction of the object", async () => {
    const { owner } = await createOrgWithOwner();
    const subject = `key:${owner.keyId}`;
    for (let i = 0; i < 5; i++) await request("GET", "/v1/orgs", { key: owner.key });
    const stub = limiterOf(subject);
    const ids = await listDurableObjectIds(env.RATE_LIMITER);
    expect(ids.some((id) => id.equals(stub.id))).toBe(true);

    await restartObject(stub);
    const after = await request("GET", "/v1/orgs", { key: owner.key });
    expect(limits(after, "default").remaining).toBe(94);
    expect(await usageOf(subject)).toEqual({ default: 6 });
  });

  it("prunes entries that left the window on access, and the alarm empties an idle object", async () => {
    const { owner } = await createOrgWithOwner();
    const subject = `key:${owner.keyId}`;
    for (let i = 0; i < 3; i++) await request("GET", "/v1/orgs", { key: owner.key });
    await request("POST", "/v1/orgs", { key: owner.key, body: { name: unique("org") } });
    const stub = limiterOf(subject);
    // The alarm before the window has passed keeps everything that still counts.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await usageOf(subject)).toEqual({ default: 3, "orgs-create": 1 });

    // Age the stored entries by a window and a millisecond, as if 60.001 s had passed.
    const age = (state: DurableObjectState) =>
      state.storage.sql.exec("UPDATE window_hits SET at = at - 60001, until = until - 60001");
    await runInDurableObject(stub, (_instance: RateLimiter, state) => age(state));
    // The object keeps its windows in memory: restart it so it reads the aged rows.
    await restartObject(stub);
    const res = await request("GET", "/v1/orgs", { key: owner.key });
    expect(limits(res, "default")).toMatchObject({ remaining: 99, reset: 60 });
    // The default window was pruned on access; orgs-create waits for the alarm.
    expect(await usageOf(subject)).toEqual({ default: 1, "orgs-create": 1 });

    await runInDurableObject(stub, (instance: RateLimiter, state) => {
      age(state);
      forgetKeyUse(instance, state); // its last use, written, and its interval passed
    });
    // The POST also left the key's D1 bookmark (src/rate-limit/bookmark.ts): kept longer than
    // a window, the alarm keeps it and wakes again when it expires.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await usageOf(subject)).toEqual({});
    const kept = await runInDurableObject(stub, async (_instance: RateLimiter, state) => ({
      bookmark: readBookmark(state.storage.sql),
      alarm: await state.storage.getAlarm(),
    }));
    // With the database it orders (the organization's: DB here).
    expect(kept.bookmark).toMatch(/^DB:[0-9a-f]{8}-/);
    expect(kept.alarm).toBeGreaterThan(Date.now() + BOOKMARK_RETENTION_MS - 60_000);
    await runInDurableObject(stub, (_instance: RateLimiter, state) => {
      state.storage.sql.exec("UPDATE d1_bookmark SET until = until - ?", BOOKMARK_RETENTION_MS + 1);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const storage = await runInDurableObject(stub, async (_instance: RateLimiter, state) => ({
      tables: state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name IN ('window_hits', 'd1_bookmark')")
        .toArray(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(storage).toEqual({ tables: [], alarm: null });
    // An emptied object starts again from a fresh window.
    const again = await request("GET", "/v1/orgs", { key: owner.key });
    expect(limits(again, "default")).toMatchObject({ remaining: 99, reset: 60 });
  });
});

describe("the limiter object", () => {
  it("never lets its window's clock run backwards (an object moved to a host whose clock lags)", async () => {
    const stub = limiterOf(`key:${unique("clock")}`);
    const decisions = await runInDurableObject(stub, (instance: RateLimiter, state) => {
      instance.usage(); // creates the table
      const ahead = Date.now() + 5_000;
      state.storage.sql.exec(
        "INSERT INTO window_hits (policy, at, until) VALUES ('orgs-create', ?, ?)",
        ahead,
        ahead + 60_000,
      );
      const first = instance.hit("orgs-create", 2, 60);
      const refused = instance.hit("orgs-create", 2, 60);
      const times = state.storage.sql
        .exec<{ at: number }>("SELECT at FROM window_hits ORDER BY rowid")
        .toArray()
        .map((r) => r.at);
      return { first, refused, times, ahead };
    });
    expect(decisions.first).toMatchObject({ allowed: true, remaining: 0, reset: 60 });
    expect(decisions.refused).toMatchObject({ allowed: false, remaining: 0, reset: 60 });
    expect(decisions.times).toEqual([decisions.ahead, decisions.ahead]);
  });
});

describe("when the limiter fails", () => {
  // The outage is logged as an error by design; these tests cause it on purpose.
  const errors = captureLogs("error");
  const fetchWithBrokenLimiter = (path: string, caller?: Caller) =>
    apiRequest("GET", path, {
      key: caller?.key ?? null,
      headers: { "cf-connecting-ip": freshClientIp() },
      bindings: { RATE_LIMITER: brokenRateLimiter() },
    });

  it("fails open: the request is served, without rate-limit headers", async () => {
    const { owner } = await createOrgWithOwner();
    const res = await fetchWithBrokenLimiter("/v1/orgs", owner);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: [expect.objectContaining({ id: owner.orgId })] });
    for (const name of [...HEADER_NAMES, "retry-after"]) expect(res.headers.get(name)).toBeNull();
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({ msg: "rate limiter unavailable; failing open", policy: "default" }),
    );
  });

  it("still refuses what authentication refuses", async () => {
    const res = await fetchWithBrokenLimiter("/v1/orgs");
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "unauthenticated" });
    for (const name of HEADER_NAMES) expect(res.headers.get(name)).toBeNull();
  });
});
