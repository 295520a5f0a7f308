/**
 * What a move relies on in the databases themselves (API_CONTRACT §32): every table holding rows of
 * an organization is carried (src/services/moves/tables.ts), each with the capture triggers of
 * migration 0017 exactly as `captureTriggers` writes them; every query that reads a chunk seeks an
 * index (other organizations share the database, so no step of a move may scan a table); and a
 * unique value freed and taken again between the copy and the catch-up arrives whole.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createServiceContext, openDb } from "../../../src/context";
import { LOCATION_TTL_MS } from "../../../src/db/locations";
import { CACHE_TTL_MS as KEY_CACHE_TTL_MS } from "../../../src/services/api-keys/authenticate";
import {
  CHUNK_BYTES,
  CHUNK_ROWS,
  chunkQuery,
  projectsChunkQuery,
  readOrder,
} from "../../../src/services/moves/chunk-reads";
import { COPY_START, type CopyCursor, catchUp, copyChunk } from "../../../src/services/moves/copy";
import { recordMove } from "../../../src/services/moves/moves";
import { removalStatement } from "../../../src/services/moves/remove";
import { MOVE_SETTLE_MS } from "../../../src/services/moves/run";
import {
  captureTriggers,
  limitsFenceTriggers,
  MOVED_TABLES,
  shapeOf,
} from "../../../src/services/moves/tables";
import { request } from "../../helpers/api";
import { createOrgWithOwnerIn, d1, ORG_DATABASES } from "../../helpers/databases";
import { createEnvironment, createProject, createStack, unique } from "../../helpers/factories";
import { orgRowsIn } from "../../helpers/moves";
import { engineCreateOk } from "../../helpers/protection";

/** Tables that hold no row a move carries, and why. */
const NOT_MOVED: Record<string, string> = {
  accounts: "shared by every organization an account is a member of: copied as rows name them, never removed",
  api_key_index: "the directory's index of keys, which names the organization's database wherever it is",
  oidc_trust_index: "the directory's index of trusts, likewise",
  org_moves: "the directory's record of moves",
  org_limits: "copied once, at the switch, under the fence (src/services/moves/switch.ts)",
  moving_orgs: "a move's own bookkeeping",
  move_changes: "a move's own bookkeeping",
};

/**
 * A move of `orgId` from DB to DB_ORG_2 run by hand, a step at a time: `copyThrough(step)` copies
 * every table up to MOVED_TABLES[step]; `finish` copies the rest and catches up; `steps` counts the
 * copy's steps so far.
 */
async function steppedMove(orgId: string) {
  const ctx = {
    ...createServiceContext({ env, requestId: unique("test"), database: "DB" }),
    request: { operationId: "internal.moveOrganization", ip: null, userAgent: null },
  };
  await recordMove(ctx, orgId, "DB_ORG_2");
  const from = openDb(env, { mode: "first-primary" }, "DB").db;
  const to = openDb(env, { mode: "first-primary" }, "DB_ORG_2").db;
  let cursor: CopyCursor | null = COPY_START;
  let steps = 0;
  const copyThrough = async (step: number) => {
    for (; cursor && cursor.step <= step; steps++) cursor = (await copyChunk(from, to, orgId, cursor)).next;
  };
  const finish = async () => {
    await copyThrough(MOVED_TABLES.length);
    for (let round = await catchUp(from, to, orgId); round.more; round = await catchUp(from, to, orgId)) {}
  };
  return { copyThrough, finish, catchUp: () => catchUp(from, to, orgId), steps: () => steps };
}

/** The index in MOVED_TABLES of the table `name`. */
const stepOf = (name: string) => MOVED_TABLES.findIndex((spec) => shapeOf(spec.table).name === name);

/** The organization's rows in DB_ORG_2 are DB's (but the move's own bookkeeping). */
async function expectCopiedWhole(orgId: string) {
  const { moving_orgs: _moving, ...rows } = await orgRowsIn("DB", orgId);
  const { organizations: _org, ...copied } = await orgRowsIn("DB_ORG_2", orgId);
  const { organizations: _own, move_changes: changes, ...source } = rows;
  expect(changes).toBeUndefined();
  expect(copied).toMatchObject({ ...source, org_limits: copied.org_limits });
}

const normal = (text: string) => text.replace(/\s+/g, " ").replace(/;\s*$/, "").trim();

describe("what a move relies on", () => {
  for (const database of ORG_DATABASES) {
    it(`${database}: every table is carried or named as not, with migration 0017's triggers exactly as captureTriggers writes them`, async () => {
      const { results: tables } = await d1(database)
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name != 'd1_migrations'",
        )
        .all<{ name: string }>();
      const carried = MOVED_TABLES.map((spec) => shapeOf(spec.table).name);
      expect(tables.map((table) => table.name).sort()).toEqual(
        [...carried, ...Object.keys(NOT_MOVED)].sort(),
      );

      const { results: triggers } = await d1(database)
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%moving%'")
        .all<{ sql: string }>();
      const expected = [...MOVED_TABLES.flatMap(captureTriggers), ...limitsFenceTriggers()];
      expect(triggers.map((trigger) => normal(trigger.sql)).sort()).toEqual(expected.map(normal).sort());
    });
  }

  it("a switched move waits longer than any isolate keeps where an organization was before it removes it", () => {
    expect(MOVE_SETTLE_MS).toBeGreaterThan(Math.max(LOCATION_TTL_MS, KEY_CACHE_TTL_MS));
  });

  it("every chunk read, first or later, seeks an index: no step of a move scans a table", async () => {
    for (const spec of MOVED_TABLES) {
      for (const after of [null, readOrder(spec).map(() => "x")]) {
        // A table of projects' rows is read across the organization's projects, each through its index.
        const query =
          spec.scope === "project"
            ? projectsChunkQuery(spec, "org", after, "t.rowid", CHUNK_ROWS)
            : { ...chunkQuery(spec, after, "t.rowid", CHUNK_ROWS), scoped: true };
        const params = "scoped" in query ? ["scope", ...query.params] : query.params;
        const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.text}`)
          .bind(...params)
          .all<{ detail: string }>();
        const plan = results.map((row) => row.detail);
        // A scan of a part's own rows (`SCAN (subquery-1)`, at most a chunk) is not of a table.
        const scans = plan.filter(
          (detail) =>
            /^SCAN /.test(detail) &&
            !/USING (COVERING )?INDEX/.test(detail) &&
            !/^SCAN \(subquery-\d+\)$/.test(detail),
        );
        expect(scans, `${shapeOf(spec.table).name}: ${plan.join(" | ")}`).toEqual([]);
        // Sorting all the scope's rows is a scan in disguise; sorting one parent's children (a
        // deployment's stacks: "RIGHT PART OF ORDER BY") is a few rows.
        expect(plan.join(" | "), shapeOf(spec.table).name).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
      }
    }
  });

  it("every removal step seeks an index, a table of projects' rows through its project's: no step scans a table", async () => {
    for (const spec of MOVED_TABLES) {
      const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${removalStatement(spec)}`)
        .bind("org")
        .all<{ detail: string }>();
      const plan = results.map((row) => row.detail);
      const scans = plan.filter((detail) => /^SCAN /.test(detail) && !/USING (COVERING )?INDEX/.test(detail));
      expect(scans, `${shapeOf(spec.table).name}: ${plan.join(" | ")}`).toEqual([]);
    }
  });

  it("the copy takes a step per table and per chunk of its rows, however many projects hold them, and copies them all", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    for (let i = 0; i < 30; i++) await createProject(owner);
    expect(Math.max(...Object.values(await orgRowsIn("DB", org.id)))).toBeLessThan(CHUNK_ROWS);
    const move = await steppedMove(org.id);
    await move.copyThrough(MOVED_TABLES.length);
    // Project by project, each table of projects' rows took a step for each of the 30 (540 in all).
    expect(move.steps()).toBe(MOVED_TABLES.length);
    await move.finish();
    await expectCopiedWhole(org.id);
  });

  it("a project with more rows of a table than a chunk holds, followed by others with rows of it: every row copied", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    // Each project's environment with more variables than two chunks: a chunk read from inside a
    // project fills with that project's rows, while projects with rows of the same table follow.
    for (let i = 0; i < 3; i++) {
      const project = await createProject(owner);
      const variables = Object.fromEntries(
        Array.from({ length: CHUNK_ROWS * 2 + 50 }, (_, n) => [`V${n}`, { type: "string", value: "x" }]),
      );
      const res = await request("PATCH", `/v1/environments/${project.default_environment_id}/variables`, {
        key: owner.key,
        body: { variables },
      });
      expect(res.status, res.raw).toBe(200);
    }
    // Rows made before the move have no change recorded: only the copy brings them.
    const move = await steppedMove(org.id);
    await move.finish();
    await expectCopiedWhole(org.id);
  });

  it("a project created after the copy carried the projects: its rows wait for the catch-up, none copied before it", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    await createProject(owner, { name: "first" });
    const move = await steppedMove(org.id);
    const projectsStep = stepOf("projects");
    expect(projectsStep).toBeLessThan(MOVED_TABLES.findIndex((spec) => spec.scope === "project") - 1);
    await move.copyThrough(projectsStep);
    // Between the projects' step and the first of their rows' (a project with its environment).
    const late = await createProject(owner, { name: "late" });
    const staging = await createEnvironment(late.id, "staging");
    await move.finish();
    const environments = await d1("DB_ORG_2")
      .prepare("SELECT id FROM environments WHERE project_id = ? ORDER BY id")
      .bind(late.id)
      .all<{ id: string }>();
    expect(environments.results.map((row) => row.id)).toContain(staging.id);
    await expectCopiedWhole(org.id);
  });

  it("a catch-up round takes at most `chunkRows` changed rows of a table of megabyte rows (spilled parts); the rest follow, in order", async () => {
    const { org } = await createOrgWithOwnerIn("DB");
    const move = await steppedMove(org.id);
    await move.copyThrough(MOVED_TABLES.length);
    expect(MOVED_TABLES[stepOf("audit_log_parts")]?.chunkRows).toBe(4);
    // An entry whose changes are in ten parts (src/db/spill.ts), written after the copy: 11 changes.
    const id = unique("aud");
    const db = d1("DB");
    await db.batch([
      db
        .prepare(
          "INSERT INTO audit_log (id, org_id, action, target_type, target_id, actor_type, request_id, created_at, sequence, changes_spilled) VALUES (?1, ?2, 'test.parts', 'x', 'x', 'admin', 'parts', ?3, (SELECT coalesce(max(sequence), 0) + 1 FROM audit_log WHERE org_id = ?2), 10)",
        )
        .bind(id, org.id, new Date().toISOString()),
      ...Array.from({ length: 10 }, (_, part) =>
        db
          .prepare("INSERT INTO audit_log_parts (entry_id, part, chunk) VALUES (?, ?, ?)")
          .bind(id, part, String(part)),
      ),
    ]);
    const rounds: { applied: number; more: boolean }[] = [];
    for (let more = true; more; ) {
      const round = await move.catchUp();
      rounds.push(round);
      more = round.more;
    }
    // The entry and four parts (with whatever else the organization's set-up changed), four
    // parts, the last two.
    expect(rounds.map((round) => round.more)).toEqual([true, true, false]);
    expect(rounds.slice(1).map((round) => round.applied)).toEqual([4, 2]);
    const parts = await d1("DB_ORG_2")
      .prepare(
        "SELECT group_concat(chunk, '') AS text FROM (SELECT chunk FROM audit_log_parts WHERE entry_id = ? ORDER BY part)",
      )
      .bind(id)
      .first<{ text: string }>();
    expect(parts?.text).toBe("0123456789");
    await expectCopiedWhole(org.id);
  });

  it("a catch-up round reads changed rows up to CHUNK_BYTES and one more (deployments of megabytes); the rest follow, in order", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const project = await createProject(owner);
    const stack = await createStack(project.default_environment_id as string);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push((await engineCreateOk(project.default_environment_id as string, [stack.id])).id);
    const move = await steppedMove(org.id);
    await move.copyThrough(MOVED_TABLES.length);
    for (let round = await move.catchUp(); round.more; round = await move.catchUp()) {}
    // The eight deployments' data rewritten after the copy, 1.5 MB each: 8 changes, 12 MB.
    const data = JSON.stringify({ patch: [{ op: "add", path: "/big", value: "x".repeat(1_500_000) }] });
    await d1("DB")
      .prepare("UPDATE deployments SET data = ? WHERE id IN (SELECT value FROM json_each(?))")
      .bind(data, JSON.stringify(ids))
      .run();
    const rounds: { applied: number; more: boolean }[] = [];
    for (let more = true; more; ) {
      const round = await move.catchUp();
      rounds.push(round);
      more = round.more;
    }
    // Two a round (3 MB; a third would pass CHUNK_BYTES, 4 MiB).
    expect(CHUNK_BYTES).toBe(4 * 1024 * 1024);
    expect(rounds).toEqual([
      { applied: 2, more: true },
      { applied: 2, more: true },
      { applied: 2, more: true },
      { applied: 2, more: false },
    ]);
    const copied = await d1("DB_ORG_2")
      .prepare(
        "SELECT count(*) AS n FROM deployments WHERE id IN (SELECT value FROM json_each(?)) AND data = ?",
      )
      .bind(JSON.stringify(ids), data)
      .first<{ n: number }>();
    expect(copied?.n).toBe(8);
    await expectCopiedWhole(org.id);
  });

  it("a deployment created after the copy carried the deployments: its stacks and timeline wait for the catch-up", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const project = await createProject(owner, { name: "deploying" });
    const stack = await createStack(project.default_environment_id as string);
    const move = await steppedMove(org.id);
    await move.copyThrough(stepOf("deployments"));
    // After the deployments' step, before their stacks' and timeline's.
    const deployment = await engineCreateOk(project.default_environment_id as string, [stack.id]);
    await move.finish();
    const timeline = await d1("DB_ORG_2")
      .prepare("SELECT count(*) AS n FROM deployment_timeline WHERE deployment_id = ?")
      .bind(deployment.id)
      .first<{ n: number }>();
    expect(timeline?.n).toBeGreaterThan(0);
    await expectCopiedWhole(org.id);
  });

  it("names freed and taken again between the copy and the catch-up (a rename, a delete, a swap) arrive whole", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const a = await createProject(owner, { name: "alpha" });
    const b = await createProject(owner, { name: "beta" });
    const staging = await createEnvironment(a.id, "staging");
    const move = await steppedMove(org.id);
    await move.copyThrough(MOVED_TABLES.length);
    // Then, before any catch-up: the two projects swap names through a third; an environment's name
    // is freed by a delete and taken by a new one.
    const rename = async (id: string, name: string) => {
      const body = (await request<Record<string, unknown>>("GET", `/v1/projects/${id}`, { key: owner.key }))
        .body;
      const res = await request("PUT", `/v1/projects/${id}`, {
        key: owner.key,
        body: { name, default_environment_id: body.default_environment_id },
      });
      expect(res.status, res.raw).toBe(200);
    };
    await rename(a.id, "swap");
    await rename(b.id, "alpha");
    await rename(a.id, "beta");
    expect((await request("DELETE", `/v1/environments/${staging.id}`, { key: owner.key })).status).toBe(204);
    const again = await createEnvironment(a.id, "staging");

    await move.finish();
    const names = async (database: "DB" | "DB_ORG_2") =>
      (
        await d1(database)
          .prepare(
            "SELECT p.id, p.name, e.id AS environment FROM projects p LEFT JOIN environments e ON e.project_id = p.id AND e.name = 'staging' WHERE p.org_id = ? ORDER BY p.id",
          )
          .bind(org.id)
          .all()
      ).results;
    expect(await names("DB_ORG_2")).toEqual(await names("DB"));
    expect((await names("DB_ORG_2")).find((row) => row.id === a.id)).toMatchObject({
      name: "beta",
      environment: again.id,
    });
    await expectCopiedWhole(org.id);
  });
});
