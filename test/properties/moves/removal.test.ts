/**
 * Removing an organization from a database (API_CONTRACT §32: the copy a cancelled move leaves in
 * its target, the rows a completed one leaves in its source) takes a step per table and per
 * REMOVE_ROWS rows, whatever the number of its projects. Taken project by project, an organization
 * of a hundred projects made thousands of steps that deleted nothing, and a cancel, which answers
 * once its copy is gone, held every other request of the local runtime for as long (12 s).
 */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { openDb } from "../../../src/context";
import { REMOVE_START, removeChunk } from "../../../src/services/moves/remove";
import { MOVED_TABLES } from "../../../src/services/moves/tables";
import { createOrgWithOwnerIn, d1 } from "../../helpers/databases";
import { createProject } from "../../helpers/factories";
import { orgRowsIn, readMove, recorded, runSaving } from "../../helpers/moves";
import { createVariable } from "../../helpers/variables";

describe("removing an organization from a database", () => {
  it("takes one step per table (and per REMOVE_ROWS rows), not one per table and project, and leaves none of its rows", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const projects = 30;
    for (let i = 0; i < projects; i++) {
      const project = await createProject(owner);
      if (i % 10 === 0)
        await createVariable(owner, `/v1/environments/${project.default_environment_id}/variables`);
    }
    const held = await orgRowsIn("DB_ORG_2", org.id);
    expect(held.projects).toBe(projects);
    expect(Math.max(...Object.values(held))).toBeLessThan(500);

    const db = openDb(env, { mode: "first-primary" }, "DB_ORG_2").db;
    let steps = 0;
    for (let cursor: typeof REMOVE_START | null = REMOVE_START; cursor; steps++) {
      cursor = await removeChunk(db, org.id, false, cursor);
    }
    // Every table once, then its limits and moves' bookkeeping, then its own row.
    expect(steps).toBe(MOVED_TABLES.length + 1);
    expect(await orgRowsIn("DB_ORG_2", org.id)).toEqual({});
  });

  it("a switched move's source refuses the organization's writes while its rows go, and then holds none", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const project = await createProject(owner);
    await createVariable(owner, `/v1/environments/${project.default_environment_id}/variables`);
    const progress = await recorded(org.id, "DB_ORG_2", "DB");
    class Stop extends Error {}
    let saved = progress;
    // Switched, and the removal of the source's rows begun: a table of them gone, the project not yet.
    await expect(
      runSaving(progress, (step) => {
        saved = step;
        if (step.phase === "cleanup" && step.removal.step > 0) throw new Stop();
      }),
    ).rejects.toThrow(Stop);
    expect((await orgRowsIn("DB_ORG_2", org.id)).projects).toBe(1);

    // A write an isolate still sends to the source (its lookup of the organization older than the
    // switch) is refused there, not taken to be removed with the rest or left behind.
    const now = new Date().toISOString();
    const stale = d1("DB_ORG_2")
      .prepare(
        "INSERT INTO environments (id, project_id, name, name_key, created_at, updated_at) VALUES (?, ?, 'late', 'late', ?, ?)",
      )
      .bind(`late-${org.id}`, project.id, now, now);
    await expect(stale.run()).rejects.toThrow(/organization moved/);

    await runSaving(saved, () => {});
    expect((await readMove(progress.move.id)).state).toBe("completed");
    expect(await orgRowsIn("DB_ORG_2", org.id)).toEqual({});
    const moved = await d1("DB")
      .prepare("SELECT count(*) AS n FROM environments WHERE project_id = ?")
      .bind(project.id)
      .first<{ n: number }>();
    expect(moved?.n).toBe(1);
  });
});
