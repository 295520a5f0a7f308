/**
 * A scope's history (API_CONTRACT §18) across operations: version numbers under concurrent
 * writers of every kind, old values kept encrypted as live ones are (and moved by the rotation
 * sweep), and scopes whose variables were made before their history began (the migration's
 * baseline). Through the real Worker and D1.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { encryptVariableValue, variableKeyVersion } from "../../src/crypto/variables";
import { newId } from "../../src/lib/ids";
import { WRITE_PATIENCE_MS } from "../../src/services/preconditions";
import { request } from "../helpers/api";
import { testDatabases } from "../helpers/databases";
import { type ErrorBody, expectError } from "../helpers/expect";
import { createComponent } from "../helpers/factories";
import {
  applied,
  applyChanges,
  type ChangeResult,
  listVersions,
  restore,
  scopeState,
  setsWorld,
  storedText,
  upTo,
  versionNumbers,
} from "../helpers/variable-sets";
import { componentPath, createVariable, type ListBody, randomKey, reveal } from "../helpers/variables";

const plain = (value: string) => ({ type: "string", value });

describe("version numbers under concurrent writers", () => {
  it("changes, creates, replaces, deletes and restores racing on one scope make 1, 2, 3… without a gap or a 500", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const seeded = await applied(owner, base, {
      variables: { R1: plain("a"), R2: plain("b"), R3: plain("c") },
    });
    const listed = (await request<ListBody>("GET", base, { key: owner.key })).body.data;
    const ids = ["R1", "R2"].map((name) => listed.find((v) => v.name === name)?.id);
    const writers = [
      ...upTo(6).map((i) => () => applyChanges(owner, base, { variables: { [`P${i}`]: plain(`${i}`) } })),
      ...upTo(4).map(
        (i) => () => createVariable(owner, base, { name: `C${i}`, type: "secret", value: `${i}` }),
      ),
      () =>
        request("PUT", `/v1/variables/${ids[0]}`, {
          key: owner.key,
          body: { name: "R1", type: "string", value: "z" },
        }),
      () => request("DELETE", `/v1/variables/${ids[1]}`, { key: owner.key }),
      () => restore(owner, base, seeded.version),
      () => applyChanges(owner, base, { variables: { R3: null } }),
    ];
    const results = await Promise.all(writers.map((write) => write()));
    for (const res of results) if ("status" in res) expect(res.status, res.raw).toBeLessThan(300);
    const numbers = await versionNumbers(owner, base);
    // Every write changed the scope at the moment it landed, except, perhaps, the restore (if it
    // found the scope as it was) or a write the restore had already undone.
    expect(numbers).toEqual(upTo(numbers.length));
    expect(numbers.length).toBeGreaterThanOrEqual(writers.length - 1);
    const versions = (await listVersions(owner, base, "?limit=240")).body.data;
    expect(new Set(versions.map((v) => v.request_id)).size).toBe(versions.length);
    // `created_at` order is version order, whichever request read the clock first.
    const times = versions.map((v) => v.created_at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("a change that keeps losing its version for longer than WRITE_ATTEMPTS quick tries still lands (WRITE_PATIENCE_MS)", async () => {
    const { owner, paths, environmentId } = await setsWorld();
    // For the next 2.5 s every version this scope's changes plan is refused as taken, as when
    // writers keep landing first while each attempt is slow (a database busy with a move, §32):
    // thirty-two quick tries pass well within that, and the write keeps trying for WRITE_PATIENCE_MS.
    const until = Date.now() + 2_500;
    const trigger = `busy_scope_${environmentId}`;
    await Promise.all(
      testDatabases().map((db) =>
        db
          .prepare(
            `CREATE TRIGGER "${trigger}" BEFORE INSERT ON variable_versions
             WHEN NEW.environment_id = '${environmentId}' AND (julianday('now') - 2440587.5) * 86400000 < ${until}
             BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: variable_versions.version'); END`,
          )
          .run(),
      ),
    );
    try {
      const res = await applyChanges(owner, paths.environment, { variables: { LATE: plain("1") } });
      expect(res.status, res.raw).toBe(200);
      expect(Date.now()).toBeGreaterThanOrEqual(until);
      expect(res.body.version).toBe(1);
    } finally {
      await Promise.all(testDatabases().map((db) => db.prepare(`DROP TRIGGER "${trigger}"`).run()));
    }
    expect(WRITE_PATIENCE_MS).toBeGreaterThan(2_500);
  });

  it("a version's created_at is never before its predecessor's, even if that one's request read a later clock", async () => {
    const { owner, paths, environmentId } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { A: plain("1") } });
    // As if version 1's request had read the clock a moment after version 2's, yet landed first.
    const later = new Date(Date.now() + 60_000).toISOString();
    await env.DB.prepare(
      "UPDATE variable_versions SET created_at = ? WHERE environment_id = ? AND scope = '_'",
    )
      .bind(later, environmentId)
      .run();
    await applied(owner, base, { variables: { A: plain("2") } });
    await createVariable(owner, base, { name: "B", type: "string", value: "b" });
    const versions = (await listVersions(owner, base, "?sort_by=created_at")).body.data;
    expect(versions.map((v) => [v.version, v.created_at])).toEqual([
      [1, later],
      [2, later],
      [3, later],
    ]);
  });

  it("a restore racing a change makes two consecutive versions, each what its request answered", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.component;
    await applied(owner, base, { variables: { A: plain("1") } });
    await applied(owner, base, { variables: { A: plain("2") } });
    for (let round = 0; round < 3; round++) {
      // A back at "2" (version 1 has "1"), whichever landed last in the round before, so that the
      // restore changes something and makes a version in either order.
      if (round > 0) await applied(owner, base, { variables: { A: plain("2") } });
      const [restored, changed] = await Promise.all([
        restore(owner, base, 1),
        applyChanges(owner, base, { variables: { [`B${round}`]: plain("x") } }),
      ]);
      expect([restored.status, changed.status], `${restored.raw} ${changed.raw}`).toEqual([200, 200]);
      const made = [restored.body.version, changed.body.version].sort((a, b) => a - b);
      expect(made[1]).toBe((made[0] as number) + 1);
      for (const res of [restored, changed]) {
        const version = (await listVersions(owner, base, "?limit=1")).body.data;
        expect(version.length).toBe(1);
        const record = (
          await request<{ changes: unknown[] }>("GET", `${base}/versions/${res.body.version}`, {
            key: owner.key,
          })
        ).body;
        expect(record.changes).toEqual(res.body.changes.filter((c) => c.action !== "unchanged"));
      }
    }
    // 2 before the rounds, 2 a round, and the reset before each round but the first.
    expect(await versionNumbers(owner, base)).toEqual(upTo(10));
  });

  it("of two changes holding the same base_version exactly one applies; the other is 409 on base_version", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { A: plain("0") } });
    const results = await Promise.all(
      upTo(6).map((i) => applyChanges(owner, base, { variables: { A: plain(`${i}`) }, base_version: 1 })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    for (const res of results.filter((r) => r.status === 409))
      expectError(res, 409, "conflict", "base_version");
    const winner = results.find((r) => r.status === 200) as { body: ChangeResult };
    expect(winner.body.version).toBe(2);
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
  });

  it("concurrent changes of the same names each apply to the scope as it then is: the answers chain", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const results = await Promise.all(
      upTo(8).map((i) => applyChanges(owner, base, { variables: { SAME: plain(`${i}`) } })),
    );
    for (const res of results) expect(res.status, res.raw).toBe(200);
    const byVersion = results.map((r) => r.body).sort((a, b) => a.version - b.version);
    expect(byVersion.map((r) => r.version)).toEqual(upTo(8));
    expect(byVersion[0]?.changes[0]?.action).toBe("created");
    for (const later of byVersion.slice(1)) expect(later.changes[0]?.action).toBe("updated");
  });
});

describe("old values are stored as live ones are", () => {
  it("no row of the database holds a secret or secure_string plaintext, old or current, whatever wrote it", async () => {
    const { owner, paths, project } = await setsWorld();
    const marker = `HIST${crypto.randomUUID().replace(/-/g, "")}`;
    const base = paths.environment;
    const made = await createVariable(owner, base, {
      name: "ONE",
      type: "secret",
      value: `${marker}-create`,
    });
    await request("PUT", `/v1/variables/${made.id}`, {
      key: owner.key,
      body: { name: "ONE", type: "secure_string", value: `${marker}-replace` },
    });
    await applied(owner, base, {
      variables: {
        ONE: { type: "secret", value: `${marker}-patch` },
        TWO: { type: "secure_string", value: `${marker}-two` },
      },
    });
    await applied(owner, base, { dotenv: `THREE=${marker}-dotenv\n`, type: "secret" });
    await restore(owner, base, 1);
    await request("DELETE", `/v1/variables/${made.id}`, { key: owner.key });
    await restore(owner, base, 3);
    const text = await storedText(project.id);
    expect(text).not.toContain(marker);
    expect(text).not.toContain(btoa(marker).slice(0, 16));
    const { results } = await env.DB.prepare(
      "SELECT type, value, key_version, sealed_for FROM variable_version_values WHERE project_id = ?",
    )
      .bind(project.id)
      .all<{
        type: string | null;
        value: string | null;
        key_version: number | null;
        sealed_for: string | null;
      }>();
    expect(results.length).toBeGreaterThan(6);
    for (const row of results.filter((r) => r.type !== null)) {
      expect(row.value).toMatch(/^v1\.\d+\./);
      expect(row.key_version).not.toBeNull();
      expect(row.sealed_for).toMatch(/^\w{22}$/);
    }
    expect(await scopeState(owner, base)).toEqual({
      ONE: ["secret", `${marker}-patch`],
      TWO: ["secure_string", `${marker}-two`],
    });
  });

  it("the rotation sweep moves the history's values too: a restore opens them with VARIABLES_KEY alone", async () => {
    const { owner, project } = await setsWorld();
    const base = componentPath((await createComponent(project.default_environment_id)).id);
    const oldKey = randomKey();
    const underOld = { VARIABLES_KEY: oldKey };
    const send = (method: string, path: string, body: unknown, bindings: Record<string, string>) =>
      request<ChangeResult>(method, path, { key: owner.key, body, bindings });
    expect(
      (await send("PATCH", base, { variables: { S: { type: "secret", value: "old-1" } } }, underOld)).status,
    ).toBe(200);
    expect(
      (await send("PATCH", base, { variables: { S: { type: "secret", value: "old-2" } } }, underOld)).status,
    ).toBe(200);
    const rotated = { VARIABLES_KEY: env.VARIABLES_KEY, VARIABLES_KEY_PREVIOUS: oldKey };
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    let moved = 0;
    for (let i = 0; i < 50; i++) {
      const step = await request<{ reencrypted: number; remaining: boolean }>(
        "POST",
        "/internal/v1/variables/reencrypt",
        {
          headers: admin,
          body: { limit: 2 },
          bindings: rotated,
        },
      );
      expect(step.status, step.raw).toBe(200);
      moved += step.body.reencrypted;
      if (!step.body.remaining) break;
    }
    // The variable, and the two values its versions keep.
    expect(moved).toBe(3);
    const current = await variableKeyVersion(env.VARIABLES_KEY);
    const left = await env.DB.prepare(
      "SELECT count(*) AS n FROM variable_version_values WHERE project_id = ? AND key_version != ?",
    )
      .bind(project.id, current)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    // The worker's own key alone (the test configuration) opens every version's value.
    expect((await restore(owner, base, 1)).status).toBe(200);
    expect(await scopeState(owner, base)).toEqual({ S: ["secret", "old-1"] });
    expect((await restore(owner, base, 2)).status).toBe(200);
    expect(await scopeState(owner, base)).toEqual({ S: ["secret", "old-2"] });
  });
});

describe("variables made before their scope's history began", () => {
  it("the migration's baseline (version 0) lets a restore bring them back", async () => {
    const { owner, paths, project, environmentId } = await setsWorld();
    const base = paths.environment;
    // A variable written as it was before the history existed: no version, no value row.
    const id = newId();
    const sealed = await encryptVariableValue(
      { current: env.VARIABLES_KEY },
      { id, environmentId, scope: "_" },
      "before-history",
    );
    const now = new Date().toISOString();
    await env.DB.prepare(
      "INSERT INTO variables (id, project_id, environment_id, component_id, scope, name, type, value, key_version, created_at, updated_at) VALUES (?, ?, ?, NULL, '_', 'LEGACY', 'secret', ?, ?, ?, ?)",
    )
      .bind(id, project.id, environmentId, sealed.envelope, sealed.keyVersion, now, now)
      .run();
    // The migration's own statement, for this environment only (the test database is shared).
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.includes("variable_history"));
    const seed = migration?.queries.find((q) => q.includes("INSERT INTO `variable_version_values`"));
    expect(seed).toMatch(/FROM `variables`;?\s*$/);
    await env.DB.prepare(
      (seed as string).replace(/FROM `variables`;?\s*$/, "FROM `variables` WHERE `environment_id` = ?"),
    )
      .bind(environmentId)
      .run();
    expect(await versionNumbers(owner, base)).toEqual([]);
    await applied(owner, base, { variables: { ADDED: plain("a") } });
    await applied(owner, base, { variables: { LEGACY: { type: "string", value: "changed" }, ADDED: null } });
    const res = await restore(owner, base, 1);
    expect(res.status, res.raw).toBe(200);
    expect(await scopeState(owner, base)).toEqual({
      ADDED: ["string", "a"],
      LEGACY: ["secret", "before-history"],
    });
    const legacy = (await request<ListBody>("GET", base, { key: owner.key })).body.data.find(
      (v) => v.name === "LEGACY",
    );
    expect(legacy?.id).toBe(id);
    expect((await reveal(owner, id)).body.value).toBe("before-history");
    const refused = await request<ErrorBody>("POST", `${base}/versions/0/restore`, { key: owner.key });
    expectError(refused, 400, "bad_input", "version");
  });
});
