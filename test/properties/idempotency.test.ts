/**
 * Idempotency-Key (API_CONTRACT §11) through the real Worker, the real RateLimiter object and
 * real D1. The one injected fault is a D1 whose batches fail, to produce a genuine 5xx.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimKey, expireKeys, IDEMPOTENCY_TTL_MS, settleKey } from "../../src/idempotency/store";
import { anonymousClient } from "../../src/lib/ip-address";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import {
  type ApiResponse,
  brokenRateLimiter,
  forgetKeyUse,
  limiterOf,
  PRODUCTION_LIMITS,
  request,
} from "../helpers/api";
import { runCron } from "../helpers/cron";
import type { ErrorBody } from "../helpers/expect";
import {
  type Caller,
  createApiKey,
  createCaller,
  createOrgWithOwner,
  createProject,
  unique,
} from "../helpers/factories";
import { captureLogs } from "../helpers/logs";

type Project = { id: string; name: string };

const inLimiter = <T>(caller: Caller, fn: (instance: RateLimiter, state: DurableObjectState) => T) =>
  runInDurableObject(limiterOf(`key:${caller.keyId}`), fn);
const entriesOf = (caller: Caller) => inLimiter(caller, (instance) => instance.idempotencyEntries());

function createWithKey(caller: Caller, key: string, name: string, headers: Record<string, string> = {}) {
  return request<Project>("POST", "/v1/projects", {
    key: caller.key,
    body: { name },
    headers: { "idempotency-key": key, ...headers },
  });
}

/** How many projects of the caller's organization carry `name`. */
async function projectsNamed(caller: Caller, name: string): Promise<number> {
  const res = await request<{ data: Project[] }>("GET", "/v1/projects?limit=100", { key: caller.key });
  expect(res.status).toBe(200);
  return res.body.data.filter((p) => p.name === name).length;
}

const remaining = (res: ApiResponse) => Number(res.headers.get("x-ratelimit-remaining"));

function expectKeyIssue(res: ApiResponse<unknown>, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = res.body as ErrorBody;
  expect(body.code).toBe(code);
  expect(body.cause).toEqual([{ path: "header.idempotency-key", message: expect.any(String) }]);
}

describe("Idempotency-Key: replay", () => {
  it("a retry answers the stored status, body and headers, marked replayed, with current rate-limit headers and a fresh request id", async () => {
    const { owner } = await createOrgWithOwner();
    const name = unique("p");
    const key = unique("key");
    const first = await createWithKey(owner, key, name, { "x-request-id": "first-attempt" });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.headers.get("location")).toBe(`/v1/projects/${first.body.id}`);
    const again = await createWithKey(owner, key, name, { "x-request-id": "second-attempt" });
    expect(again.status).toBe(201);
    expect(again.raw).toBe(first.raw);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.headers.get("x-request-id")).toBe("second-attempt");
    // The key's latest write bookmark, at least as fresh as the write replayed: something to hand
    // to another key, for a client that lost the first answer.
    const written = first.headers.get("x-d1-bookmark");
    const replayed = again.headers.get("x-d1-bookmark");
    expect(written).toBeTruthy();
    expect(replayed! >= written!).toBe(true);
    // The replay executed nothing, so it recorded nothing: the one entry is the first attempt's.
    const entries = await env.DB.prepare(
      "SELECT request_id FROM audit_log WHERE action = 'createProject' AND target_id = ?",
    )
      .bind(first.body.id)
      .all<{ request_id: string }>();
    expect(entries.results.map((r) => r.request_id)).toEqual(["first-attempt"]);
    expect(remaining(again)).toBe(remaining(first) - 1);
    expect(again.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
    expect(await projectsNamed(owner, name)).toBe(1);
  });

  it("replays error answers below 500 too, and a 204", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("key");
    const bad = await request("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "" },
      headers: { "idempotency-key": key },
    });
    expect(bad.status).toBe(400);
    const badAgain = await request("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "" },
      headers: { "idempotency-key": key },
    });
    expect(badAgain.status).toBe(400);
    expect(badAgain.raw).toBe(bad.raw);
    expect(badAgain.headers.get("idempotent-replayed")).toBe("true");

    const project = await createProject(owner);
    const delKey = unique("del");
    const del = await request("DELETE", `/v1/projects/${project.id}`, {
      key: owner.key,
      headers: { "idempotency-key": delKey },
    });
    expect(del.status).toBe(204);
    const delAgain = await request("DELETE", `/v1/projects/${project.id}`, {
      key: owner.key,
      headers: { "idempotency-key": delKey },
    });
    expect(delAgain.status).toBe(204);
    expect(delAgain.raw).toBe("");
    expect(delAgain.headers.get("idempotent-replayed")).toBe("true");
    expect(delAgain.headers.get("x-d1-bookmark")! >= del.headers.get("x-d1-bookmark")!).toBe(true);
    // Without the key the same DELETE executes, and the project is gone.
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(404);
  });

  it("keys are scoped to the API key: another key with the same Idempotency-Key executes", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const key = unique("shared");
    const name = unique("p");
    const mine = await createWithKey(owner, key, name);
    expect(mine.status).toBe(201);
    const theirs = await createWithKey(admin, key, unique("p"));
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it("requests without the header, and GETs with it, are never replayed", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const get = await request("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
      headers: { "idempotency-key": "get-key" },
    });
    expect(get.status).toBe(200);
    expect(get.headers.get("idempotent-replayed")).toBeNull();
    expect(await entriesOf(owner)).toBe(0);
  });
});

describe("Idempotency-Key: refusals", () => {
  it("the same key with another method, path, query or body is 400 and executes nothing", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("key");
    const name = unique("p");
    expect((await createWithKey(owner, key, name)).status).toBe(201);
    const other = unique("p");
    expectKeyIssue(await createWithKey(owner, key, other), 400, "bad_input");
    const withQuery = await request("POST", "/v1/projects?x=1", {
      key: owner.key,
      body: { name },
      headers: { "idempotency-key": key },
    });
    expectKeyIssue(withQuery, 400, "bad_input");
    // The same JSON value, other bytes: the fingerprint is of the raw body.
    const spaced = await request("POST", "/v1/projects", {
      key: owner.key,
      rawBody: JSON.stringify({ name }, null, 1),
      headers: { "idempotency-key": key, "content-type": "application/json" },
    });
    expectKeyIssue(spaced, 400, "bad_input");
    expect(await projectsNamed(owner, other)).toBe(0);
    expect(await projectsNamed(owner, name)).toBe(1);
  });

  it("a malformed key is 400 with cause header.idempotency-key, before anything executes", async () => {
    const { owner } = await createOrgWithOwner();
    for (const bad of ["", "a b", "x".repeat(256), "tab\tkey"]) {
      const name = unique("p");
      const res = await createWithKey(owner, bad, name);
      expectKeyIssue(res, 400, "bad_input");
      expect(res.headers.get("x-ratelimit-remaining")).not.toBeNull();
      expect(await projectsNamed(owner, name)).toBe(0);
    }
    const longest = await createWithKey(owner, `~${"!".repeat(254)}`, unique("p"));
    expect(longest.status).toBe(201);
  });

  it("while the first request is executing: 409 conflict with Retry-After: 1, nothing executes", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("key");
    const name = unique("p");
    expect((await createWithKey(owner, key, name)).status).toBe(201);
    // Put the entry back to `running`, as it is while its request executes.
    await inLimiter(owner, (_i, state) => {
      state.storage.sql.exec(
        "UPDATE idempotency SET state = 'running', lease_until = ? WHERE key = ?",
        Date.now() + 60_000,
        key,
      );
    });
    const res = await createWithKey(owner, key, name);
    expectKeyIssue(res, 409, "conflict");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await projectsNamed(owner, name)).toBe(1);
    // A claim whose request died holds its key only for its lease; then the write's own record
    // of its key answers (test/properties/idempotency-lost-answers.test.ts).
    await inLimiter(owner, (_i, state) => {
      state.storage.sql.exec("UPDATE idempotency SET lease_until = ? WHERE key = ?", Date.now() - 1, key);
    });
    const late = await createWithKey(owner, key, name);
    expect(late.status).toBe(201);
    expect(late.headers.get("idempotent-replayed")).toBe("true");
    expect(await projectsNamed(owner, name)).toBe(1);
  });

  it("of concurrent duplicates exactly one executes; the others replay or answer 409", async () => {
    const { owner } = await createOrgWithOwner();
    for (let round = 0; round < 3; round++) {
      const key = unique("race");
      const name = unique("p");
      const answers = await Promise.all(Array.from({ length: 6 }, () => createWithKey(owner, key, name)));
      const executed = answers.filter((a) => a.status === 201 && !a.headers.get("idempotent-replayed"));
      expect(executed).toHaveLength(1);
      for (const a of answers) {
        if (a === executed[0]) continue;
        if (a.status === 409) expect(a.headers.get("retry-after")).toBe("1");
        else
          expect([a.status, a.raw, a.headers.get("idempotent-replayed")]).toEqual([
            201,
            executed[0]?.raw,
            "true",
          ]);
      }
      expect(await projectsNamed(owner, name)).toBe(1);
    }
  });

  it("401 and 429 neither use nor store a key", async () => {
    const { owner } = await createOrgWithOwner();
    const ip = "2001:db8:1d::1";
    const unauth = await request("POST", "/v1/projects", {
      key: `dpk_${"C".repeat(43)}`,
      body: { name: "x" },
      headers: { "idempotency-key": "k-401", "cf-connecting-ip": ip },
    });
    expect(unauth.status).toBe(401);
    expect(
      await runInDurableObject(limiterOf(`ip:${anonymousClient(ip)}`), (instance: RateLimiter) =>
        instance.idempotencyEntries(),
      ),
    ).toBe(0);

    // The production limit of org creation (the test configuration raises it).
    for (let i = 0; i < 10; i++) {
      const org = await request("POST", "/v1/orgs", {
        key: owner.key,
        body: { name: unique("o") },
        bindings: PRODUCTION_LIMITS,
      });
      expect(org.status).toBe(201);
    }
    const refused = await request("POST", "/v1/orgs", {
      key: owner.key,
      body: { name: unique("o") },
      headers: { "idempotency-key": "k-429" },
      bindings: PRODUCTION_LIMITS,
    });
    expect(refused.status).toBe(429);
    expect(await entriesOf(owner)).toBe(0);
  });

  it("a request refused before its route begins (scope, malformed headers, the body guard) releases its key: the mended retry executes", async () => {
    const { owner } = await createOrgWithOwner();
    const good = (name: string) => JSON.stringify({ name });
    // Each case: a first request refused before its route, then the same key with it mended.
    const cases: {
      name: string;
      status: number;
      first: Record<string, unknown>;
    }[] = [
      {
        name: "content type",
        status: 400,
        first: { rawBody: good("a"), headers: { "content-type": "text/plain" } },
      },
      {
        name: "charset",
        status: 400,
        first: { rawBody: good("b"), headers: { "content-type": "application/json; charset=iso-8859-1" } },
      },
      { name: "not JSON", status: 400, first: { rawBody: '{"name":' } },
      {
        name: "depth",
        status: 400,
        first: { rawBody: `{"name":"c","x":${"[".repeat(64)}${"]".repeat(64)}}` },
      },
      { name: "surrogate", status: 400, first: { rawBody: '{"name":"\\ud800"}' } },
      { name: "bookmark", status: 400, first: { rawBody: good("d"), headers: { "x-d1-bookmark": "nope" } } },
    ];
    let stored = 0;
    for (const c of cases) {
      const key = unique(`k-${c.name.replace(/ /g, "-")}`);
      const { headers = {}, ...rest } = c.first as { headers?: Record<string, string> };
      const first = await request("POST", "/v1/projects", {
        key: owner.key,
        ...rest,
        headers: { "content-type": "application/json", ...headers, "idempotency-key": key },
      });
      expect(first.status, c.name).toBe(c.status);
      expect(await entriesOf(owner), c.name).toBe(stored);
      // Mended (the header left out, or a well-formed body), with the same Idempotency-Key.
      const mended = await request("POST", "/v1/projects", {
        key: owner.key,
        body: { name: unique("p") },
        headers: { "idempotency-key": key },
      });
      expect(mended.status, c.name).toBe(201);
      expect(mended.headers.get("idempotent-replayed"), c.name).toBeNull();
      expect(await entriesOf(owner), c.name).toBe(++stored);
    }

    // A key without the operation's scope: 403, and the key is not used either.
    const reader = await createApiKey(owner, { scopes: ["projects:read"] });
    const key = unique("k-scope");
    const refused = await createWithKey(reader, key, unique("p"));
    expect(refused.status).toBe(403);
    expect(await entriesOf(reader)).toBe(0);
  });
});

describe("Idempotency-Key: release and expiry", () => {
  // The injected D1 failure is logged as an unhandled error by design.
  const errors = captureLogs("error");
  it("a 5xx is not stored: the key is released and a retry executes", async () => {
    const { owner } = await createOrgWithOwner();
    // Every query runs on a D1 session (src/db/session.ts): its batches are the ones that fail.
    const failingBatches = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(inner, prop) {
          if (prop === "batch") return () => Promise.reject(new Error("D1_ERROR: injected failure"));
          if (prop === "withSession") {
            return (start: string) => failingBatches((inner as D1Database).withSession(start));
          }
          const value = Reflect.get(inner, prop);
          return typeof value === "function" ? value.bind(inner) : value;
        },
      });
    const failingDb = failingBatches(env.DB);
    const key = unique("key");
    const name = unique("p");
    const failed = await request("POST", "/v1/projects", {
      key: owner.key,
      headers: { "idempotency-key": key },
      body: { name },
      bindings: { DB: failingDb },
    });
    expect(failed.status).toBe(500);
    expect(errors.lines()).toContainEqual(expect.objectContaining({ msg: "unhandled error" }));
    expect(await entriesOf(owner)).toBe(0);
    const retry = await createWithKey(owner, key, name);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await projectsNamed(owner, name)).toBe(1);
  });

  it("entries are forgotten 24 h after the first request, by the object's alarm", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("key");
    const first = await createWithKey(owner, key, unique("p"));
    expect(first.status).toBe(201);
    // The window empties first: the alarm must keep the live entry (and the object's storage).
    await inLimiter(owner, (_i, state) => {
      state.storage.sql.exec("UPDATE window_hits SET until = ?", Date.now() - 1);
    });
    await runDurableObjectAlarm(limiterOf(`key:${owner.keyId}`));
    expect(await entriesOf(owner)).toBe(1);
    const replay = await createWithKey(owner, key, JSON.parse(first.raw).name);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");

    // 24 h pass (the entry is aged by a day): the alarm deletes it, and the cron forgets the key
    // the write committed with its audit entry.
    await env.DB.prepare("UPDATE audit_log SET created_at = ? WHERE idempotency_key = ?")
      .bind(new Date(Date.now() - IDEMPOTENCY_TTL_MS - 1).toISOString(), key)
      .run();
    expect(await runCron()).toContainEqual(
      expect.objectContaining({ msg: "idempotency keys forgotten", database: "DB" }),
    );
    const alarmAt = await inLimiter(owner, (_i, state) => {
      state.storage.sql.exec("UPDATE idempotency SET expires_at = expires_at - ?", IDEMPOTENCY_TTL_MS);
      state.storage.sql.exec("UPDATE window_hits SET until = ?", Date.now() - 1);
      return state.storage.getAlarm();
    });
    expect(alarmAt).not.toBeNull();
    await runDurableObjectAlarm(limiterOf(`key:${owner.keyId}`));
    expect(await entriesOf(owner)).toBe(0);
    const name = unique("p");
    const after = await createWithKey(owner, key, name);
    expect(after.status).toBe(201);
    expect(after.headers.get("idempotent-replayed")).toBeNull();
    expect(await projectsNamed(owner, name)).toBe(1);
  });

  it("the alarm is set for the entry's expiry once the window is empty and the key's bookmark forgotten", async () => {
    const { owner } = await createOrgWithOwner();
    await createWithKey(owner, unique("key"), unique("p"));
    // The write also left the key's D1 bookmark (src/rate-limit/bookmark.ts), kept 10 minutes,
    // and its last use (src/rate-limit/key-use.ts), kept 5.
    await inLimiter(owner, (instance, state) => {
      state.storage.sql.exec("UPDATE window_hits SET until = ?", Date.now() - 1);
      state.storage.sql.exec("UPDATE d1_bookmark SET until = ?", Date.now() - 1);
      forgetKeyUse(instance, state);
    });
    await runDurableObjectAlarm(limiterOf(`key:${owner.keyId}`));
    const { expiresAt, alarmAt } = await inLimiter(owner, async (_i, state) => ({
      expiresAt: state.storage.sql.exec<{ at: number }>("SELECT expires_at AS at FROM idempotency").one().at,
      alarmAt: await state.storage.getAlarm(),
    }));
    expect(alarmAt).toBe(expiresAt);
  });

  it("a replay carries the write's bookmark after the key's own is forgotten (it is kept 10 minutes, a key 24 h)", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("key");
    const name = unique("p");
    const first = await createWithKey(owner, key, name);
    expect(first.status).toBe(201);
    await inLimiter(owner, (_i, state) => {
      state.storage.sql.exec("UPDATE window_hits SET until = ?", Date.now() - 1);
      state.storage.sql.exec("UPDATE d1_bookmark SET until = ?", Date.now() - 1);
    });
    await runDurableObjectAlarm(limiterOf(`key:${owner.keyId}`));
    const again = await createWithKey(owner, key, name);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-d1-bookmark")).toBe(first.headers.get("x-d1-bookmark"));
  });
});

describe("Idempotency-Key: large answers", () => {
  it("are kept whole in parts and replayed byte for byte, even once the record is gone", async () => {
    const { owner } = await createOrgWithOwner();
    // Over one 1 MB part, and multi-byte UTF-8 across every part boundary.
    const icon = `url:data:text/plain,${"é🚀a".repeat(145_000)}`;
    const key = unique("big");
    const send = () =>
      request<Project>("POST", "/v1/projects", {
        key: owner.key,
        headers: { "idempotency-key": key },
        body: { name: unique("big"), icon },
      });
    const name = unique("big");
    const first = await request<Project>("POST", "/v1/projects", {
      key: owner.key,
      headers: { "idempotency-key": key },
      body: { name, icon },
    });
    expect(first.status, first.raw.slice(0, 200)).toBe(201);
    expect(new TextEncoder().encode(first.raw).byteLength).toBeGreaterThan(1_000_000);
    const stored = await inLimiter(owner, (_i, state) => ({
      row: state.storage.sql
        .exec<{ body: string | null; ref: string | null }>(
          "SELECT body, ref FROM idempotency WHERE key = ?",
          key,
        )
        .one(),
      parts: state.storage.sql
        .exec<{ n: number }>("SELECT count(*) AS n FROM idempotency_parts WHERE key = ?", key)
        .one().n,
    }));
    expect(stored).toEqual({ row: { body: null, ref: null }, parts: 2 });
    const gone = await request("DELETE", `/v1/projects/${first.body.id}`, { key: owner.key });
    expect(gone.status).toBe(204);
    const again = await request<Project>("POST", "/v1/projects", {
      key: owner.key,
      headers: { "idempotency-key": key },
      body: { name, icon },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.raw).toBe(first.raw);
    for (const header of ["etag", "location", "content-type"]) {
      expect(again.headers.get(header), header).toBe(first.headers.get(header));
    }
    // The same key with another body is still a mismatch.
    expect((await send()).status).toBe(400);
  });

  it("past the object's budget, a large answer that carried a record is kept by reference", async () => {
    const { owner } = await createOrgWithOwner();
    const body = (fill: string) => JSON.stringify({ fill: fill.repeat(70 * 1024) });
    const claim = (key: string) => ({ key, fingerprint: `f-${key}` });
    const answer = (fill: string, ref: string | null) => ({
      status: 201,
      headers: { "content-type": "application/json" },
      body: body(fill),
      ref,
    });
    const budget = 100 * 1024;
    const replayed = await inLimiter(owner, (instance, state) => {
      instance.idempotencyEntries(); // its tables made
      const sql = state.storage.sql;
      for (const key of ["a", "b", "c"]) claimKey(sql, claim(key), Date.now());
      settleKey(sql, claim("a"), answer("a", "/v1/projects/a"), budget); // within the budget: whole
      settleKey(sql, claim("b"), answer("b", "/v1/projects/b"), budget); // past it: by reference
      settleKey(sql, claim("c"), answer("c", null), budget); // past it, but no record: whole
      return ["a", "b", "c"].map((key) => claimKey(sql, claim(key), Date.now()));
    });
    expect(replayed).toEqual([
      { state: "replay", answer: answer("a", null) },
      { state: "replay", answer: { ...answer("b", "/v1/projects/b"), body: null } },
      { state: "replay", answer: answer("c", null) },
    ]);
    // Expired entries take their parts with them.
    const left = await inLimiter(owner, (_i, state) => {
      expireKeys(state.storage.sql, Date.now() + IDEMPOTENCY_TTL_MS + 1);
      return state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM idempotency_parts").one().n;
    });
    expect(left).toBe(0);
  });
});

describe("Idempotency-Key without the limiter", () => {
  // The limiter outage is logged as an error by design.
  const errors = captureLogs("error");
  it("a keyed write is refused (500, nothing executes) while unkeyed requests fail open", async () => {
    const { owner } = await createOrgWithOwner();
    const send = async (name: string, headers: Record<string, string>) =>
      (
        await request("POST", "/v1/projects", {
          key: owner.key,
          headers,
          body: { name },
          bindings: { RATE_LIMITER: brokenRateLimiter() },
        })
      ).status;
    const keyed = unique("p");
    expect(await send(keyed, { "idempotency-key": unique("k") })).toBe(500);
    expect(await projectsNamed(owner, keyed)).toBe(0);
    const plain = unique("p");
    expect(await send(plain, {})).toBe(201);
    expect(await projectsNamed(owner, plain)).toBe(1);
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({ msg: "rate limiter unavailable; failing open" }),
    );
  });
});
