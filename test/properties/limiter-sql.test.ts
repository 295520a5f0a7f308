/**
 * The SQL a limiter object runs per request (issue #12): once its window is in memory, an
 * admitted request is one INSERT and a refused one no statement at all; what it keeps in
 * memory is exactly what its table holds. On the real Durable Object; the object's SQL handle
 * is wrapped to record each statement and delegate it.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import { restartObject } from "../helpers/api";

type Internals = { sql: SqlStorage; windows: Map<string, number[]> };

const freshLimiter = () => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`sql-${crypto.randomUUID()}`));

/** Runs `work` with the object's SQL recorded: the first word of each statement. */
function recording<T>(instance: RateLimiter, work: () => T): { result: T; statements: string[] } {
  const internals = instance as unknown as Internals;
  const real = internals.sql;
  const statements: string[] = [];
  internals.sql = {
    exec: (query: string, ...bindings: unknown[]) => {
      statements.push(query.split(" ", 1)[0] ?? "");
      return real.exec(query, ...bindings);
    },
  } as SqlStorage;
  try {
    return { result: work(), statements };
  } finally {
    internals.sql = real;
  }
}

const admit = (instance: RateLimiter, limit = 100) =>
  instance.admit({ policy: "default", limit, windowSeconds: 60 });

describe("a limiter object's SQL per request", () => {
  it("is one INSERT for an admitted request, none for a refused one, once the window is read", async () => {
    const stub = freshLimiter();
    await runInDurableObject(stub, (instance: RateLimiter) => {
      admit(instance, 3); // creates the tables and reads the (empty) window
      const second = recording(instance, () => admit(instance, 3));
      expect(second.result.decision).toMatchObject({ allowed: true, remaining: 1 });
      expect(second.statements).toEqual(["INSERT"]);
      admit(instance, 3);
      const refused = recording(instance, () => admit(instance, 3));
      expect(refused.result.decision).toMatchObject({ allowed: false, remaining: 0 });
      expect(refused.statements).toEqual([]);
    });
  });

  it("reads the window and the bookmark once after a restart, and counts what was stored before it", async () => {
    const stub = freshLimiter();
    await runInDurableObject(stub, (instance: RateLimiter) => {
      for (let i = 0; i < 5; i++) admit(instance);
      instance.recordBookmark("0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b");
    });
    await restartObject(stub);
    await runInDurableObject(stub, (instance: RateLimiter) => {
      const first = recording(instance, () => admit(instance));
      expect(first.result.decision.remaining).toBe(94);
      expect(first.result.bookmark).toBe("0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b");
      expect(first.statements.filter((s) => s === "SELECT")).toHaveLength(2);
      const next = recording(instance, () => admit(instance));
      expect(next.result.decision.remaining).toBe(93);
      expect(next.result.bookmark).toBe("0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b");
      expect(next.statements).toEqual(["INSERT"]);
    });
  });

  it("keeps in memory exactly the rows its table holds, under traffic and after the alarm", async () => {
    const stub = freshLimiter();
    const memoryAndTable = (instance: RateLimiter, state: DurableObjectState) => ({
      memory: [...((instance as unknown as Internals).windows.get("default") ?? [])],
      table: state.storage.sql
        .exec<{ at: number }>("SELECT at FROM window_hits WHERE policy = 'default' ORDER BY at")
        .toArray()
        .map((r) => r.at),
    });
    await runInDurableObject(stub, (instance: RateLimiter, state) => {
      for (let i = 0; i < 250; i++) admit(instance);
      const kept = memoryAndTable(instance, state);
      expect(kept.memory).toHaveLength(100);
      expect(kept.memory).toEqual(kept.table);
      state.storage.sql.exec("UPDATE window_hits SET until = ?", Date.now() - 1);
    });
    // The alarm deletes rows behind the window's back: the object forgets what it kept.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await runInDurableObject(stub, (instance: RateLimiter, state) => {
      expect((instance as unknown as Internals).windows.size).toBe(0);
      expect(admit(instance).decision.remaining).toBe(99);
      const kept = memoryAndTable(instance, state);
      expect(kept.memory).toHaveLength(1);
      expect(kept.memory).toEqual(kept.table);
    });
  });
});
