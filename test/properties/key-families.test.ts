/**
 * API_CONTRACT §28: a key family shares one rate limit. A key made from another (§21) counts in
 * the window of the key at the top of its chain, which authentication reads off the key's own row
 * (`api_keys.limiter`), so a request still makes one Durable Object call. What that object keeps
 * for each key stays the key's own: its Idempotency-Keys (§11) and its `last_used_at`.
 * (The keys an OpenID Connect trust issues share their trust's window: test/routes/oidc/.)
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import {
  request as apiRequest,
  freshClientIp,
  limiterOf,
  PRODUCTION_LIMITS,
  type RequestOptions,
} from "../helpers/api";
import { createApiKey, createOrgWithOwner, deriveKey } from "../helpers/factories";

/** A request under the production limits, from a client address of its own. */
const request = <T = unknown>(method: string, path: string, options: RequestOptions = {}) =>
  apiRequest<T>(method, path, {
    ...options,
    headers: { "cf-connecting-ip": freshClientIp(), ...options.headers },
    bindings: PRODUCTION_LIMITS,
  });

const remaining = (res: { headers: Headers }) => Number(res.headers.get("x-ratelimit-remaining"));

const limiterColumn = async (keyId: string) =>
  (await env.DB.prepare("SELECT limiter FROM api_keys WHERE id = ?").bind(keyId).first<{ limiter: string }>())
    ?.limiter;

describe("a key family shares one rate limit (§28)", () => {
  it("a key made from a key, at any depth, counts in its root's window; another root has its own", async () => {
    const { owner } = await createOrgWithOwner();
    const child = await deriveKey(owner);
    const grandchild = await deriveKey(child);
    const other = await createApiKey(owner);
    expect(await limiterColumn(child.keyId)).toBe(`key:${owner.keyId}`);
    expect(await limiterColumn(grandchild.keyId)).toBe(`key:${owner.keyId}`);
    expect(await limiterColumn(other.keyId)).toBe(`key:${other.keyId}`);

    const first = await request("GET", "/v1/orgs", { key: owner.key });
    const second = await request("GET", "/v1/orgs", { key: child.key });
    const third = await request("GET", "/v1/orgs", { key: grandchild.key });
    expect([first, second, third].map((r) => r.status)).toEqual([200, 200, 200]);
    expect([remaining(first), remaining(second), remaining(third)]).toEqual([99, 98, 97]);
    expect(remaining(await request("GET", "/v1/orgs", { key: other.key }))).toBe(99);
    // One object counts them all; none of the made keys has a window of its own.
    const usage = await runInDurableObject(limiterOf(`key:${owner.keyId}`), (o: RateLimiter) => o.usage());
    expect(usage.default).toBe(3);
    const own = await runInDurableObject(limiterOf(`key:${child.keyId}`), (o: RateLimiter) => o.usage());
    expect(own).toEqual({});
  });

  it("answers the shared window's 429: the family together gets the policy's limit", async () => {
    const { owner } = await createOrgWithOwner();
    const child = await deriveKey(owner);
    // `orgs-create` (10 / 60 s): an invalid body still counts.
    const keys = [owner.key, child.key];
    for (let i = 0; i < 10; i++) {
      const res = await request("POST", "/v1/orgs", { key: keys[i % 2], body: {} });
      expect(res.status).toBe(400);
    }
    const refused = await request("POST", "/v1/orgs", { key: child.key, body: {} });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit-policy")).toBe('"orgs-create";q=10;w=60');
    expect((await request("POST", "/v1/orgs", { key: owner.key, body: {} })).status).toBe(429);
  });

  it("keeps each key's Idempotency-Keys its own in the shared object", async () => {
    const { owner } = await createOrgWithOwner();
    const child = await deriveKey(owner);
    const headers = { "idempotency-key": "same-key-in-one-family" };
    const byOwner = await request("POST", "/v1/api-keys", { key: owner.key, headers, body: { name: "a" } });
    // The same Idempotency-Key from another key of the family, with another body: its own, so it
    // executes (no 400 for a reused key, no replay of the owner's answer).
    const byChild = await request("POST", "/v1/api-keys", { key: child.key, headers, body: { name: "b" } });
    expect([byOwner.status, byChild.status]).toEqual([201, 201]);
    expect(byChild.headers.get("idempotent-replayed")).toBeNull();
    const replay = await request("POST", "/v1/api-keys", { key: child.key, headers, body: { name: "b" } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(byChild.body);
  });

  it("keeps each key's last use its own in the shared object", async () => {
    const { owner } = await createOrgWithOwner();
    const child = await deriveKey(owner);
    const limiter = limiterOf(`key:${owner.keyId}`);
    // `bindings`: each request's first-use write is done before it returns.
    expect((await request("GET", "/v1/orgs", { key: owner.key })).status).toBe(200);
    expect((await request("GET", "/v1/orgs", { key: child.key })).status).toBe(200);
    const lastUsed = (id: string) =>
      env.DB.prepare("SELECT last_used_at FROM api_keys WHERE id = ?")
        .bind(id)
        .first<{ last_used_at: string | null }>();
    expect((await lastUsed(owner.keyId))?.last_used_at).not.toBeNull();
    expect((await lastUsed(child.keyId))?.last_used_at).not.toBeNull();

    // Used again within the interval: each key's use waits in the object, and the alarm writes both.
    const before = Date.now();
    await request("GET", "/v1/orgs", { key: owner.key });
    await request("GET", "/v1/orgs", { key: child.key });
    const pending = await runInDurableObject(limiter, (object: RateLimiter, state) => {
      const rows = state.storage.sql.exec<{ key_id: string }>("SELECT key_id FROM key_uses").toArray();
      state.storage.sql.exec("UPDATE key_uses SET due_at = ?", Date.now());
      const uses = (object as unknown as { uses?: Map<string, { dueAt: number | null }> }).uses;
      for (const use of uses?.values() ?? []) use.dueAt = Date.now();
      return rows.map((r) => r.key_id).sort();
    });
    expect(pending).toEqual([owner.keyId, child.keyId].sort());
    expect(await runDurableObjectAlarm(limiter)).toBe(true);
    for (const id of [owner.keyId, child.keyId]) {
      expect(Date.parse((await lastUsed(id))?.last_used_at ?? "")).toBeGreaterThanOrEqual(before);
    }
  });

  it("migration 0013 puts every existing key in its root's family", async () => {
    const { owner } = await createOrgWithOwner();
    const child = await deriveKey(owner);
    const grandchild = await deriveKey(child);
    const ids = [owner.keyId, child.keyId, grandchild.keyId];
    // As the keys were before the column: no limiter. Then the migration's own backfill, again.
    await env.DB.prepare("UPDATE api_keys SET limiter = NULL WHERE id IN (?, ?, ?)")
      .bind(...ids)
      .run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0013_"));
    const backfill = migration?.queries.at(-1) ?? "";
    expect(backfill).toMatch(/^WITH RECURSIVE/m);
    await env.DB.prepare(backfill).run();
    for (const id of ids) expect(await limiterColumn(id)).toBe(`key:${owner.keyId}`);
  });

  it("a key without a limiter (written before the column) counts in its own object", async () => {
    const { owner } = await createOrgWithOwner();
    const child = await deriveKey(owner);
    await env.DB.prepare("UPDATE api_keys SET limiter = NULL WHERE id = ?").bind(child.keyId).run();
    // A fresh key of this test's own, never cached by authentication.
    expect((await request("GET", "/v1/orgs", { key: child.key })).status).toBe(200);
    const own = await runInDurableObject(limiterOf(`key:${child.keyId}`), (o: RateLimiter) => o.usage());
    expect(own.default).toBe(1);
  });
});

describe("the limiter object's storage (src/rate-limit/migrations.ts)", () => {
  it("migration 2 moves the one key's use an object kept into the per-key table", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`migrations-${crypto.randomUUID()}`));
    const rows = await runInDurableObject(stub, (object: RateLimiter, state) => {
      const { sql } = state.storage;
      // An object as migration 1 left it, holding one key's pending use.
      sql.exec("CREATE TABLE do_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
      sql.exec(
        "CREATE TABLE key_use (id INTEGER PRIMARY KEY CHECK (id = 1), key_id TEXT NOT NULL, used_at INTEGER NOT NULL, written_at INTEGER, due_at INTEGER)",
      );
      sql.exec(
        "CREATE TABLE key_use_database (id INTEGER PRIMARY KEY CHECK (id = 1), database TEXT NOT NULL)",
      );
      sql.exec(
        "CREATE TABLE window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)",
      );
      sql.exec("INSERT INTO do_migrations VALUES (1, 0)");
      sql.exec("INSERT INTO key_use VALUES (1, 'key-old', 10, 5, 20)");
      sql.exec("INSERT INTO key_use_database VALUES (1, 'DB_ORG_2')");
      object.usage(); // any call migrates
      return {
        uses: sql.exec("SELECT * FROM key_uses").toArray(),
        tables: sql
          .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name LIKE 'key_use%'")
          .toArray()
          .map((t) => t.name),
      };
    });
    expect(rows.uses).toEqual([
      { key_id: "key-old", database: "DB_ORG_2", used_at: 10, written_at: 5, due_at: 20 },
    ]);
    expect(rows.tables).toEqual(["key_uses"]);
  });
});
