/**
 * The numbered migrations of every Durable Object's own storage (src/lib/do-migrations.ts), on
 * real objects' SQLite storage: each migration applied once, in order, with its version recorded;
 * a second start applies nothing, a migration added later applies alone, a failed one leaves
 * nothing and runs again. And each object's migration 1 is harmless on an object made before the
 * lists existed, which holds that schema already.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeliveryLane } from "../../src/delivery-lane/object";
import { type Baseline, MIGRATIONS_TABLE, type Migration, migrate } from "../../src/lib/do-migrations";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import {
  BASELINE as LIMITER_BASELINE,
  MIGRATIONS as LIMITER_MIGRATIONS,
} from "../../src/rate-limit/migrations";
import { restartObject } from "../helpers/api";

/**
 * A fresh object whose own list is empty (a deployment's feed keeps its state without tables), so
 * that its storage holds only what a test's list makes.
 */
const freshObject = () =>
  env.DEPLOYMENT_FEED.get(env.DEPLOYMENT_FEED.idFromName(`migrations-${crypto.randomUUID()}`));

const versions = (state: DurableObjectState) =>
  state.storage.sql
    .exec<{ version: number }>(`SELECT version FROM ${MIGRATIONS_TABLE} ORDER BY version`)
    .toArray()
    .map((r) => r.version);

/** Each step notes itself in `steps`, so the test sees which ran and in what order. */
const V1: Migration = {
  version: 1,
  sql: ["CREATE TABLE steps (n INTEGER NOT NULL)", "INSERT INTO steps (n) VALUES (1)"],
};
const V2: Migration = {
  version: 2,
  apply(sql) {
    sql.exec("ALTER TABLE steps ADD COLUMN note TEXT");
    sql.exec("INSERT INTO steps (n, note) VALUES (2, 'added')");
  },
};
const V3: Migration = { version: 3, sql: ["INSERT INTO steps (n) VALUES (3)"] };

const steps = (state: DurableObjectState) =>
  state.storage.sql
    .exec<{ n: number }>("SELECT n FROM steps ORDER BY rowid")
    .toArray()
    .map((r) => r.n);

describe("migrate", () => {
  it("applies each migration once, in order, and records its version; a later one applies alone", async () => {
    const stub = freshObject();
    await runInDurableObject(stub, (_object, state) => {
      expect(migrate(state.storage, [V1, V2])).toEqual([1, 2]);
      expect(steps(state)).toEqual([1, 2]);
      expect(versions(state)).toEqual([1, 2]);
    });
    // A second start: its storage has them all.
    await restartObject(stub);
    await runInDurableObject(stub, (_object, state) => {
      expect(migrate(state.storage, [V1, V2])).toEqual([]);
      expect(steps(state)).toEqual([1, 2]);
    });
    // A deployment that appended a migration: only that one runs.
    await restartObject(stub);
    await runInDurableObject(stub, (_object, state) => {
      expect(migrate(state.storage, [V1, V2, V3])).toEqual([3]);
      expect(steps(state)).toEqual([1, 2, 3]);
      expect(versions(state)).toEqual([1, 2, 3]);
    });
  });

  it("leaves neither the changes nor the record of a migration that fails, and runs it again next time", async () => {
    const stub = freshObject();
    const failing: Migration = {
      version: 2,
      sql: ["INSERT INTO steps (n) VALUES (2)", "INSERT INTO no_such_table VALUES (1)"],
    };
    await runInDurableObject(stub, (_object, state) => {
      expect(() => migrate(state.storage, [V1, failing])).toThrow(/no_such_table/);
      // Migration 1 stays applied; migration 2 left nothing.
      expect(steps(state)).toEqual([1]);
      expect(versions(state)).toEqual([1]);
      expect(migrate(state.storage, [V1, { ...V3, version: 2 }])).toEqual([2]);
      expect(steps(state)).toEqual([1, 3]);
    });
  });

  it("refuses a list not numbered 1, 2, 3, … in order, before touching storage", async () => {
    await runInDurableObject(freshObject(), (_object, state) => {
      expect(() => migrate(state.storage, [V2, V1])).toThrow(/numbered/);
      expect(() => migrate(state.storage, [V1, V3])).toThrow(/numbered/);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray()).toEqual([]);
    });
  });

  it("touches no storage for an empty list (a feed that restarts stays without tables)", async () => {
    const stub = freshObject();
    await restartObject(stub);
    await runInDurableObject(stub, (_object, state) => {
      expect(migrate(state.storage, [])).toEqual([]);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray()).toEqual([]);
    });
  });
});

/** Every table and index of a storage, as SQLite records them (the statement that made each). */
const schemaOf = (state: DurableObjectState) =>
  state.storage.sql
    .exec<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name <> ? AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name",
      MIGRATIONS_TABLE,
    )
    .toArray();

describe("a baseline, in place of the migrations it stands for", () => {
  const V1_V2: Baseline = {
    version: 2,
    sql: [
      "CREATE TABLE steps (n INTEGER NOT NULL, note TEXT)",
      "INSERT INTO steps (n, note) VALUES (0, 'baseline')",
    ],
  };

  it("is what a storage with no table gets, with the versions it stands for; later ones apply after it", async () => {
    const stub = freshObject();
    await runInDurableObject(stub, (_object, state) => {
      expect(migrate(state.storage, [V1, V2, V3], V1_V2)).toEqual([1, 2, 3]);
      // The baseline's row, then migration 3's: migrations 1 and 2 never ran.
      expect(steps(state)).toEqual([0, 3]);
      expect(versions(state)).toEqual([1, 2, 3]);
    });
    await restartObject(stub);
    await runInDurableObject(stub, (_object, state) => {
      expect(migrate(state.storage, [V1, V2, V3], V1_V2)).toEqual([]);
    });
  });

  it("is taken by a storage that holds only the runtime's own tables (an alarm, a key-value pair, wrangler dev's record of the name)", async () => {
    await runInDurableObject(freshObject(), async (_object, state) => {
      await state.storage.setAlarm(Date.now() + 3_600_000);
      state.storage.kv.put("k", "v");
      // What miniflare's wrapper of an object made by name writes under `wrangler dev`.
      state.storage.sql.exec("CREATE TABLE __miniflare_do_name (name TEXT PRIMARY KEY)");
      expect(migrate(state.storage, [V1, V2], V1_V2)).toEqual([1, 2]);
      expect(steps(state)).toEqual([0]);
      await state.storage.deleteAlarm();
    });
  });

  it("is not taken by a storage that holds anything: an object made before the lists takes the steps", async () => {
    await runInDurableObject(freshObject(), (_object, state) => {
      state.storage.sql.exec("CREATE TABLE unrelated (x INTEGER)");
      expect(migrate(state.storage, [V1, V2], V1_V2)).toEqual([1, 2]);
      expect(steps(state)).toEqual([1, 2]);
    });
  });

  it("is not taken by a storage that records migrations, even with every table gone", async () => {
    await runInDurableObject(freshObject(), (_object, state) => {
      expect(migrate(state.storage, [V1])).toEqual([1]);
      state.storage.sql.exec("DROP TABLE steps");
      state.storage.sql.exec("CREATE TABLE steps (n INTEGER NOT NULL)");
      expect(migrate(state.storage, [V1, V2], V1_V2)).toEqual([2]);
      expect(steps(state)).toEqual([2]);
    });
  });

  it("leaves nothing when one of its statements fails, and is taken again next time", async () => {
    const stub = freshObject();
    await runInDurableObject(stub, (_object, state) => {
      const broken: Baseline = { version: 2, sql: [...V1_V2.sql, "INSERT INTO no_such_table VALUES (1)"] };
      expect(() => migrate(state.storage, [V1, V2], broken)).toThrow(/no_such_table/);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray()).toEqual([]);
      expect(migrate(state.storage, [V1, V2], V1_V2)).toEqual([1, 2]);
      expect(steps(state)).toEqual([0]);
    });
  });

  it("may not stand for migrations the list does not hold", async () => {
    await runInDurableObject(freshObject(), (_object, state) => {
      expect(() => migrate(state.storage, [V1], V1_V2)).toThrow(/baseline/);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray()).toEqual([]);
    });
  });

  it("the limiter's is the schema its migrations 1 to 4 make, statement for statement", async () => {
    const stepwise = await runInDurableObject(freshObject(), (_object, state) => {
      migrate(state.storage, LIMITER_MIGRATIONS.slice(0, LIMITER_BASELINE.version));
      return schemaOf(state);
    });
    const baseline = await runInDurableObject(freshObject(), (_object, state) => {
      migrate(state.storage, LIMITER_MIGRATIONS.slice(0, LIMITER_BASELINE.version), LIMITER_BASELINE);
      return schemaOf(state);
    });
    expect(stepwise.length).toBeGreaterThan(0);
    expect(baseline).toEqual(stepwise);
  });

  it("a limiter that deleted all of its storage makes it again from the baseline, and counts", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`migrations-${crypto.randomUUID()}`));
    const made = await runInDurableObject(stub, async (object: RateLimiter, state) => {
      object.hit("default", 10, 60);
      const first = { usage: object.usage(), versions: versions(state), schema: schemaOf(state) };
      // What the alarm does once nothing is left (src/rate-limit/limiter.ts).
      await state.storage.deleteAll();
      (object as unknown as { migrated: boolean }).migrated = false;
      (object as unknown as { windows: Map<string, unknown> }).windows.clear();
      object.hit("default", 10, 60);
      return { first, again: { usage: object.usage(), versions: versions(state), schema: schemaOf(state) } };
    });
    expect(made.first.usage).toEqual({ default: 1 });
    expect(made.first.versions).toEqual([1, 2, 3, 4]);
    expect(made.again).toEqual(made.first);
  });
});

describe("each object's migration 1 on an object made before the lists", () => {
  it("a limiter keeps the rows it holds and records version 1", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`migrations-${crypto.randomUUID()}`));
    const at = Date.now();
    const usage = await runInDurableObject(stub, (object: RateLimiter, state) => {
      // The window's table as the limiter made it before src/rate-limit/migrations.ts, with a row.
      state.storage.sql.exec(
        "CREATE TABLE window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)",
      );
      state.storage.sql.exec("INSERT INTO window_hits VALUES ('default', ?, ?)", at, at + 60_000);
      return { usage: object.usage(), versions: versions(state) };
    });
    // Version 1 recorded, and every later one applied after it.
    expect(usage).toEqual({ usage: { default: 1 }, versions: [1, 2, 3, 4] });
  });

  it("a lane whose table predates `bookmark` and `database` gets them, its entries kept", async () => {
    const stub = env.DELIVERY_LANES.get(env.DELIVERY_LANES.idFromName(`migrations-${crypto.randomUUID()}`));
    const held = await runInDurableObject(stub, (lane: DeliveryLane, state) => {
      // The lane's table as it first shipped, with an entry due in an hour (no alarm runs it).
      state.storage.sql.exec(
        "CREATE TABLE lane (delivery_id TEXT PRIMARY KEY, series INTEGER NOT NULL, manual INTEGER NOT NULL, tries INTEGER NOT NULL, due_at INTEGER NOT NULL)",
      );
      state.storage.sql.exec("INSERT INTO lane VALUES ('dlv_old', 0, 0, 2, ?)", Date.now() + 3600_000);
      const entries = lane.entries();
      return {
        entries: entries.map(({ deliveryId, tries, bookmark, database }) => ({
          deliveryId,
          tries,
          bookmark,
          database,
        })),
        versions: versions(state),
      };
    });
    expect(held).toEqual({
      entries: [{ deliveryId: "dlv_old", tries: 2, bookmark: null, database: null }],
      versions: [1],
    });
  });
});
