/**
 * API_CONTRACT §32 under faults: a crash after any step of a move (each step then runs twice: what
 * a kill of its object at any point amounts to, since its progress is saved after every step), a
 * target that refuses every write, a directory that refuses the switch. (Killing the object itself
 * with `state.abort` mid-run left the shared test runtime's isolate broken for later tests.)
 * A move that completes reads as the organization did, with one `internal.completeMove`; one that
 * fails leaves it whole where it was and `to` holding none of its rows.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_DEPLOYMENT_DATA_BYTES } from "../../../src/services/deployments/record";
import { CHUNK_BYTES } from "../../../src/services/moves/chunk-reads";
import { CHANGES_PER_ROUND } from "../../../src/services/moves/copy";
import { REMOVE_START } from "../../../src/services/moves/remove";
import { type MoveProgress, runMove } from "../../../src/services/moves/run";
import { internalOk, request } from "../../helpers/api";
import { createOrgWithOwnerIn, type OrgDatabase } from "../../helpers/databases";
import { deploy } from "../../helpers/engine";
import { createProject, createStack, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import {
  auditActions,
  injectFault,
  orgRowsIn,
  readAll,
  readMove,
  recorded,
  runSaving,
  startMove,
  waitForMove,
  world,
} from "../../helpers/moves";

const errors = captureLogs("error");

/** What a completed move leaves behind where it was: nothing but the directory's own entry. */
const leftIn = (database: OrgDatabase) => (database === "DB" ? { organizations: 1 } : {});

class Crash extends Error {}

/**
 * Runs a recorded move to its end in this isolate, crashing after every step once (the step's
 * work done, its progress not saved), so that every step runs twice. Returns the steps it ran.
 */
async function runCrashingAfterEveryStep(progress: MoveProgress): Promise<string[]> {
  let saved = progress;
  let repeat = false;
  const steps: string[] = [];
  for (let runs = 0; runs < 500; runs++) {
    try {
      const { progress: next, at } = await runMove(
        env,
        saved,
        { deadline: Date.now() + 60_000, settleMs: 0, interrupted: () => false },
        async (step) => {
          steps.push(step.phase);
          if (!repeat) {
            repeat = true;
            throw new Crash();
          }
          repeat = false;
          saved = step;
        },
      );
      if (at === null) return steps;
      saved = next;
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
    }
  }
  throw new Error("the move did not finish in 500 runs");
}

/**
 * `db`, noting the UTF-8 bytes of every string bound to its statements (its sessions' too) in
 * `bound`, and the length of every statement's rows read (`all`, alone or in a batch), as JSON, in
 * `read`.
 */
function measuringBinds(db: D1Database, bound: number[], read: number[] = []): D1Database {
  const encoder = new TextEncoder();
  const noteRows = (result: D1Result<unknown>) => read.push(JSON.stringify(result.results ?? []).length);
  const measured = (statement: D1PreparedStatement): D1PreparedStatement => {
    const bind = statement.bind.bind(statement);
    const all = statement.all.bind(statement);
    statement.bind = (...values: unknown[]) => {
      for (const value of values) if (typeof value === "string") bound.push(encoder.encode(value).length);
      return measured(bind(...values));
    };
    statement.all = (async () => {
      const result = await all();
      noteRows(result);
      return result;
    }) as D1PreparedStatement["all"];
    return statement;
  };
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(inner, prop) {
        if (prop === "withSession") {
          return (start: string) => wrap((inner as D1Database).withSession(start));
        }
        if (prop === "prepare") return (text: string) => measured((inner as D1Database).prepare(text));
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            const results = await (inner as D1Database).batch(statements);
            for (const result of results) noteRows(result);
            return results;
          };
        }
        const value = Reflect.get(inner, prop);
        return typeof value === "function" ? value.bind(inner) : value;
      },
    });
  return wrap(db);
}

/**
 * Records a move of `orgId` and runs it to its end in this isolate, on databases that note every
 * string bound to their statements and every statement's rows: its final state, the largest value
 * bound, in UTF-8 bytes, and the most one statement read, as JSON.
 */
async function moveMeasuringBinds(orgId: string, from: OrgDatabase, to: OrgDatabase) {
  const bound: number[] = [];
  const read: number[] = [];
  const measured = {
    ...env,
    DB: measuringBinds(env.DB, bound, read),
    DB_ORG_2: measuringBinds(env.DB_ORG_2, bound, read),
  } as Env;
  let progress = await recorded(orgId, from, to);
  for (let runs = 0; runs < 500; runs++) {
    const next = await runMove(
      measured,
      progress,
      { deadline: Date.now() + 60_000, settleMs: 0, interrupted: () => false },
      async (step) => {
        progress = step;
      },
    );
    progress = next.progress;
    if (next.at === null) break;
  }
  return {
    state: (await readMove(progress.move.id)).state,
    largest: Math.max(...bound),
    largestRead: Math.max(...read),
  };
}

const countOf = (entries: { action: string }[], action: string) =>
  entries.filter((entry) => entry.action === action).length;

/**
 * The directory's flip of `orgId` to `to` refused by an injected trigger on the directory's row;
 * resolves to its removal. Into DB the target's own batch meets it too (the directory's row is the
 * target's copy); into DB_ORG_2 that batch commits first, and only the flip fails.
 */
const refuseFlip = (orgId: string, to: OrgDatabase = "DB") =>
  injectFault(
    "DB",
    `flip_${orgId}`,
    "BEFORE UPDATE OF database ON organizations",
    `NEW.id = '${orgId}' AND NEW.database = '${to}'`,
  );

describe("a move under faults", () => {
  for (const [from, to] of [
    ["DB", "DB_ORG_2"],
    ["DB_ORG_2", "DB"],
  ] as const) {
    it(`${from} → ${to}, a crash after every step (each runs twice): it completes, record for record, one completeMove`, async () => {
      const w = await world(from);
      const before = await readAll(w.owner, w.paths);
      const progress = await recorded(w.org.id, from, to);
      const steps = await runCrashingAfterEveryStep(progress);
      expect(steps).toEqual(expect.arrayContaining(["copy", "catchup", "switched", "cleanup"]));
      expect((await readMove(progress.move.id)).state).toBe("completed");
      expect(await readAll(w.owner, w.paths)).toEqual(before);
      const entries = await auditActions(w.owner);
      expect(countOf(entries, "internal.moveOrganization")).toBe(1);
      expect(countOf(entries, "internal.completeMove")).toBe(1);
      expect(entries.map((entry) => entry.sequence)).toEqual(entries.map((_, i) => i + 1));
      expect(await orgRowsIn(from, w.org.id)).toEqual(leftIn(from));
      expect(await internalOk("GET", `/orgs/${w.org.id}`)).toMatchObject({ database: to });
    }, 60_000);
  }

  it("a cancel's undo cut short by a crash after every step is finished by later runs, with one internal.cancelMove of the cancel's request", async () => {
    const w = await world("DB");
    const before = await readAll(w.owner, w.paths);
    const recordedMove = await recorded(w.org.id, "DB", "DB_ORG_2");
    // One copy step, its progress lost to a crash (the target holds rows the progress does not name);
    // then the undo a cancel saves (src/org-move/object.ts), with the cancel's request.
    await expect(
      runMove(
        env,
        recordedMove,
        { deadline: Date.now() + 60_000, settleMs: 0, interrupted: () => false },
        () => Promise.reject(new Crash()),
      ),
    ).rejects.toThrow(Crash);
    expect(await orgRowsIn("DB_ORG_2", w.org.id)).not.toEqual({});
    const by = { requestId: unique("cancel"), ip: "192.0.2.7", userAgent: "operator/1" };
    const undoing: MoveProgress = {
      ...recordedMove,
      phase: "undo",
      removal: REMOVE_START,
      outcome: { state: "cancelled", error: null, by },
    };
    const steps = await runCrashingAfterEveryStep(undoing);
    expect(steps).toContain("undo");
    expect((await readMove(undoing.move.id)).state).toBe("cancelled");
    expect(await readAll(w.owner, w.paths)).toEqual(before);
    expect(await orgRowsIn("DB_ORG_2", w.org.id)).toEqual({});
    const entries = await env.DB.prepare(
      "SELECT request_id, ip, user_agent, actor_type FROM audit_log WHERE org_id = ? AND action = 'internal.cancelMove'",
    )
      .bind(w.org.id)
      .all();
    expect(entries.results).toEqual([
      { request_id: by.requestId, ip: by.ip, user_agent: by.userAgent, actor_type: "admin" },
    ]);
  }, 60_000);

  it("a row whose JSON would outgrow D1's 2,000,000 bytes a value (a deployment's data of 1.9 MB, mostly quotes) is copied with no bound value over it", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const project = await createProject(owner);
    const stack = await createStack(project.default_environment_id);
    const deployment = await deploy(project.default_environment_id, [stack.id]);
    // Within MAX_DEPLOYMENT_DATA_BYTES, as an engine's patches can grow it; written as they would leave it.
    const op = { op: "add", path: '/"q"', value: '"\\"' };
    const data = JSON.stringify({ patch: Array.from({ length: 40_000 }, () => op) });
    expect(data.length).toBeGreaterThan(1_500_000);
    expect(data.length).toBeLessThanOrEqual(MAX_DEPLOYMENT_DATA_BYTES);
    await env.DB.prepare("UPDATE deployments SET data = ? WHERE id = ?").bind(data, deployment.id).run();
    const { state, largest } = await moveMeasuringBinds(org.id, "DB", "DB_ORG_2");
    expect(state).toBe("completed");
    expect(largest).toBeLessThanOrEqual(2_000_000);
    const copied = await env.DB_ORG_2.prepare("SELECT data FROM deployments WHERE id = ?")
      .bind(deployment.id)
      .first<{ data: string }>();
    expect(copied?.data).toBe(data);
  }, 60_000);

  it("rows of megabytes are copied a few at a time: no chunk reads much more than CHUNK_BYTES", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const project = await createProject(owner);
    const stack = await createStack(project.default_environment_id);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await deploy(project.default_environment_id, [stack.id])).id);
    // Eight deployments of 1.5 MB each: 12 MB, which one chunk of up to 200 rows read at once.
    const data = JSON.stringify({ patch: [{ op: "add", path: "/big", value: "x".repeat(1_500_000) }] });
    expect(data.length).toBeLessThanOrEqual(MAX_DEPLOYMENT_DATA_BYTES);
    await env.DB.prepare("UPDATE deployments SET data = ? WHERE id IN (SELECT value FROM json_each(?))")
      .bind(data, JSON.stringify(ids))
      .run();
    const { state, largestRead } = await moveMeasuringBinds(org.id, "DB", "DB_ORG_2");
    expect(state).toBe("completed");
    // A chunk stops at the first row past CHUNK_BYTES: at most that and one row more, with the
    // JSON around the values.
    expect(largestRead).toBeLessThanOrEqual(CHUNK_BYTES + data.length + 100_000);
    const copied = await env.DB_ORG_2.prepare(
      "SELECT count(*) AS n FROM deployments WHERE id IN (SELECT value FROM json_each(?)) AND data = ?",
    )
      .bind(JSON.stringify(ids), data)
      .first<{ n: number }>();
    expect(copied?.n).toBe(8);
  }, 60_000);

  it("rows of text outside ASCII are grouped by their UTF-8 bytes: no bound value over 2,000,000 bytes", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    // Four projects whose icons hold 200,000 three-byte characters each: 0.8 M characters, 2.4 MB.
    const icon = `emoji:${"語".repeat(200_000)}`;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createProject(owner)).id);
    for (const id of ids)
      await env.DB.prepare("UPDATE projects SET icon = ? WHERE id = ?").bind(icon, id).run();
    const { state, largest } = await moveMeasuringBinds(org.id, "DB", "DB_ORG_2");
    expect(state).toBe("completed");
    expect(largest).toBeLessThanOrEqual(2_000_000);
    const copied = await env.DB_ORG_2.prepare(
      "SELECT count(*) AS n FROM projects WHERE org_id = ? AND icon = ?",
    )
      .bind(org.id, icon)
      .first<{ n: number }>();
    expect(copied?.n).toBe(4);
  }, 60_000);

  it("a target that refuses every write: the move fails, undone; the organization whole where it was, `to` empty of it", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const project = await createProject(owner);
    const paths = ["/v1/projects", `/v1/projects/${project.id}`, `/v1/projects/${project.id}/environments`];
    const before = await readAll(owner, paths);
    const drop = await injectFault(
      "DB_ORG_2",
      `target_${org.id}`,
      "BEFORE INSERT ON projects",
      `NEW.org_id = '${org.id}'`,
    );
    try {
      const move = await startMove(org.id, "DB_ORG_2");
      const failed = await waitForMove(move.id);
      expect(failed.state).toBe("failed");
      expect(failed.error).toMatch(/injected/);
      expect(failed.finished_at).not.toBeNull();
    } finally {
      await drop();
    }
    expect(errors.lines().some((line) => line.msg === "move run failed; retried")).toBe(true);
    expect(await orgRowsIn("DB_ORG_2", org.id)).toEqual({});
    expect(await readAll(owner, paths)).toEqual(before);
    expect(await internalOk("GET", `/orgs/${org.id}`)).toMatchObject({ database: "DB" });
    // Whole and writable where it was, its changes no longer recorded; and it can move after all.
    expect(
      (await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } })).status,
    ).toBe(201);
    expect((await orgRowsIn("DB", org.id)).move_changes).toBeUndefined();
    const again = await waitForMove((await startMove(org.id, "DB_ORG_2")).id);
    expect(again.state).toBe("completed");
  }, 60_000);

  it("rows_copied reads the rows copied so far while it copies, not only when a run ends (§32)", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    await createProject(owner);
    const progress = await recorded(org.id, "DB_ORG_2", "DB");
    // The copy stops at the environments, after the organization, its members, projects, keys and
    // audit entries went over in steps of their own.
    const drop = await injectFault(
      "DB",
      `environments_${org.id}`,
      "BEFORE INSERT ON environments",
      `NEW.project_id IN (SELECT id FROM projects WHERE org_id = '${org.id}')`,
    );
    let saved = progress;
    try {
      await expect(
        runSaving(progress, (step) => {
          saved = step;
        }),
      ).rejects.toThrow(/injected/);
    } finally {
      await drop();
    }
    const move = await readMove(progress.move.id);
    expect(move.state).toBe("copying");
    expect(saved.rowsCopied).toBeGreaterThanOrEqual(4);
    expect(move.rows_copied).toBe(saved.rowsCopied);
  });

  it("rows_copied never reads less after a run cut short at the switch: the next run counts on from the record (§32)", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    await createProject(owner);
    const progress = await recorded(org.id, "DB_ORG_2", "DB");
    // The switch fails at the directory, after its rounds applied the changes of a write made once
    // the copy was done: the record counts them (the fence lifted), the saved progress does not,
    // and no later round applies them again.
    const drop = await refuseFlip(org.id);
    let saved = progress;
    let wrote = false;
    const run = (p: MoveProgress) =>
      runSaving(p, async (step) => {
        saved = step;
        if (step.phase !== "catchup" || wrote) return;
        wrote = true;
        const write = await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } });
        expect(write.status, write.raw).toBe(201);
      });
    try {
      await expect(run(progress)).rejects.toThrow(/injected/);
    } finally {
      await drop();
    }
    const cut = await readMove(progress.move.id);
    expect(cut.state).toBe("copying");
    expect(cut.rows_copied).toBeGreaterThan(saved.rowsCopied);

    const read = [cut.rows_copied];
    for (let next = await run(saved); next.at !== null; next = await run(next.progress)) {
      read.push((await readMove(progress.move.id)).rows_copied);
    }
    const done = await readMove(progress.move.id);
    read.push(done.rows_copied);
    expect(done.state).toBe("completed");
    expect(read).toEqual([...read].sort((a, b) => a - b));
    expect(done.rows_copied).toBeGreaterThanOrEqual(cut.rows_copied);
    expect((await orgRowsIn("DB", org.id)).projects).toBe(2);
  }, 60_000);

  it("a switch put off for its time budget keeps the count of the changes it applied under the fence (§32 rows_copied)", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const project = await createProject(owner);
    const progress = await recorded(org.id, "DB_ORG_2", "DB");
    // As the fence goes up, more changes than a round applies are waiting (CHANGES_PER_ROUND + 1
    // of the project's row): the first round under the fence leaves some, and a budget that has
    // always run out puts the switch off after it.
    const trigger = `more_changes_${org.id}`;
    const many = JSON.stringify(Array.from({ length: CHANGES_PER_ROUND + 1 }, (_, i) => i));
    await env.DB_ORG_2.prepare(
      `CREATE TRIGGER ${trigger} AFTER UPDATE OF fenced ON moving_orgs WHEN NEW.org_id = '${org.id}' AND NEW.fenced = 1 BEGIN INSERT INTO move_changes (org_id, tbl, pk) SELECT '${org.id}', 'projects', json_array('${project.id}') FROM json_each('${many}'); END`,
    ).run();
    let before = progress;
    let later: Awaited<ReturnType<typeof runMove>>;
    try {
      later = await runMove(
        env,
        progress,
        { deadline: Date.now() + 30_000, settleMs: 0, interrupted: () => false, switchBudgetMs: -1 },
        async (step) => {
          before = step;
        },
      );
    } finally {
      await env.DB_ORG_2.prepare(`DROP TRIGGER IF EXISTS ${trigger}`).run();
    }
    const put = await readMove(progress.move.id);
    expect(put.state).toBe("copying");
    expect(later.at).not.toBeNull();
    // The round under the fence applied the project's row: counted by the record and by the
    // progress the object keeps, which the next run counts on from.
    expect(later.progress.rowsCopied).toBeGreaterThan(before.rowsCopied);
    expect(put.rows_copied).toBe(later.progress.rowsCopied);

    const read = [put.rows_copied];
    let next = later;
    while (next.at !== null) {
      next = await runSaving(next.progress, () => {});
      read.push((await readMove(progress.move.id)).rows_copied);
    }
    expect((await readMove(progress.move.id)).state).toBe("completed");
    expect(read).toEqual([...read].sort((a, b) => a - b));
    expect((await request("GET", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(200);
  }, 60_000);

  for (const [from, to] of [
    ["DB_ORG_2", "DB"],
    ["DB", "DB_ORG_2"],
  ] as const) {
    it(`${from} → ${to}, a directory that refuses the switch: the fence is lifted at once and writes go on; retried, it switches once, its log gapless`, async () => {
      const { org, owner } = await createOrgWithOwnerIn(from);
      const project = await createProject(owner);
      const progress = await recorded(org.id, from, to);
      const drop = await refuseFlip(org.id, to);
      let saved = progress;
      const run = (p: MoveProgress) =>
        runSaving(p, (step) => {
          saved = step;
        });
      await expect(run(progress)).rejects.toThrow(/injected/);
      await drop();
      expect((await readMove(progress.move.id)).state).toBe("copying");
      expect(await internalOk("GET", `/orgs/${org.id}`)).toMatchObject({ database: from });
      // Its entry takes the next sequence in the source, the one the refused switch's
      // completeMove had taken in the target.
      const write = await request<{ id: string }>("POST", "/v1/projects", {
        key: owner.key,
        body: { name: unique("p") },
      });
      expect(write.status, write.raw).toBe(201);

      for (let next = await run(saved); next.at !== null; next = await run(next.progress)) {}
      expect((await readMove(progress.move.id)).state).toBe("completed");
      const entries = await auditActions(owner);
      expect(countOf(entries, "internal.completeMove")).toBe(1);
      expect(entries.map((entry) => entry.sequence)).toEqual(entries.map((_, i) => i + 1));
      expect((await orgRowsIn(to, org.id)).projects).toBe(2);
      expect(await orgRowsIn(from, org.id)).toEqual(leftIn(from));
      expect((await request("GET", `/v1/projects/${write.body.id}`, { key: owner.key })).status).toBe(200);
      expect((await request("GET", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(200);
    }, 60_000);
  }
});
