/**
 * What a long-running isolate and busy limiter objects keep stays bounded, however long the
 * traffic runs (bench/README.md, the memory figure of `npm run bench`): the limiter object's rows, and the API-key cache
 * of the isolate (its bound is setBounded's, tested here directly: filling 10,000 keys through
 * D1 would take minutes). On the real Durable Object and real D1; no timing.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../../src/context";
import { setBounded } from "../../src/lib/bounded-map";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import {
  authenticate,
  hashKey,
  KEY_CACHE_MAX_ENTRIES,
  keyCacheSize,
} from "../../src/services/api-keys/authenticate";
import { restartObject } from "../helpers/api";
import { createOrgWithOwner } from "../helpers/factories";

const rows = (state: DurableObjectState) =>
  state.storage.sql
    .exec<{ policy: string; n: number }>("SELECT policy, count(*) AS n FROM window_hits GROUP BY policy")
    .toArray();

describe("the limiter object's storage", () => {
  it("holds at most `limit` rows per policy under traffic that never stops, and nothing once idle", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`bounded-${crypto.randomUUID()}`));
    for (let window = 0; window < 4; window++) {
      await runInDurableObject(stub, (instance: RateLimiter, state) => {
        let admitted = 0;
        for (let i = 0; i < 250; i++) {
          if (instance.hit("default", 100, 60).allowed) admitted++;
          if (instance.hit("reveal", 20, 60).allowed) admitted++;
        }
        expect(admitted).toBe(120);
        expect(rows(state)).toEqual([
          { policy: "default", n: 100 },
          { policy: "reveal", n: 20 },
        ]);
        // As if a window and a millisecond had passed before the next burst.
        state.storage.sql.exec("UPDATE window_hits SET at = at - 60001, until = until - 60001");
      });
      // The object keeps its windows in memory: restart it so it reads the aged rows.
      await restartObject(stub);
    }
    // Idle: the clean-up alarm leaves the object without any storage.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const left = await runInDurableObject(stub, async (_instance: RateLimiter, state) => ({
      tables: state.storage.sql.exec("SELECT name FROM sqlite_master").toArray(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(left).toEqual({ tables: [], alarm: null });
  });
});

describe("the API-key cache of an isolate", () => {
  it("setBounded keeps the newest `max` entries in insertion order, a re-set key counting as new", () => {
    const map = new Map<string, number>();
    for (let i = 0; i < 10; i++) setBounded(map, `k${i}`, i, 4);
    expect([...map.keys()]).toEqual(["k6", "k7", "k8", "k9"]);
    setBounded(map, "k6", 60, 4);
    setBounded(map, "k10", 10, 4);
    expect([...map.entries()]).toEqual([
      ["k8", 8],
      ["k9", 9],
      ["k6", 60],
      ["k10", 10],
    ]);
  });

  it(`holds each authenticated key once, up to ${KEY_CACHE_MAX_ENTRIES}, and writes nothing`, async () => {
    const { org, owner } = await createOrgWithOwner();
    const keys = Array.from({ length: 30 }, (_, i) => `dpk_${"c".repeat(37)}${String(i).padStart(6, "0")}`);
    const rows = await Promise.all(
      keys.map(async (key, i) => {
        const hash = await hashKey(key);
        const id = `bounded-${org.id}-${i}`;
        const at = new Date().toISOString();
        return [
          env.DB.prepare(
            "INSERT INTO api_keys (id, org_id, account_id, created_by, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
          ).bind(id, org.id, owner.accountId, owner.accountId, hash, at),
          // The directory's index of the key (src/db/databases.ts), as every key's creation writes it.
          env.DB.prepare(
            "INSERT INTO api_key_index (key_hash, key_id, org_id, created_at) VALUES (?, ?, ?, ?)",
          ).bind(hash, id, org.id, at),
        ];
      }),
    );
    await env.DB.batch(rows.flat());
    const before = keyCacheSize();
    for (let round = 0; round < 3; round++) {
      const writes: Promise<unknown>[] = [];
      const ctx = createServiceContext({
        env,
        requestId: `bounded-${round}`,
        waitUntil: (work) => writes.push(work),
      });
      for (const key of keys) await authenticate(ctx, key);
      await Promise.all(writes);
      // Authentication writes nothing (a key's use is its limiter object's to record).
      expect(writes).toHaveLength(0);
    }
    const after = keyCacheSize();
    expect(after.keys).toBe(Math.min(KEY_CACHE_MAX_ENTRIES, before.keys + keys.length));
  });
});
