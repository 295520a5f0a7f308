/**
 * Statements whose SQL text is built once per isolate (src/db/compiled.ts): built once per
 * variant, bound per request on the request's own D1 session, and read back exactly as
 * Drizzle reads the same row.
 */
import { env } from "cloudflare:test";
import { eq, getTableColumns, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { bindCompiled, compiled, rowReader } from "../src/db/compiled";
import { deployments, projectMembers, projects } from "../src/db/schema";
import { openSession } from "../src/db/session";
import { internalOk } from "./helpers/api";
import { createProjectWithStack } from "./helpers/factories";

const byId = (variant: string, onBuild: () => void) =>
  compiled(variant, (b) => {
    onBuild();
    return b
      .select(getTableColumns(deployments))
      .from(deployments)
      .where(eq(deployments.id, sql.placeholder("id")));
  });

describe("compiled statements", () => {
  it("build their SQL once per variant, and each variant apart", () => {
    let builds = 0;
    const variant = `test:${crypto.randomUUID()}`;
    const first = byId(variant, () => builds++);
    const again = byId(variant, () => builds++);
    expect(again).toBe(first);
    expect(builds).toBe(1);
    expect(first.sql).toContain('"deployments"."id" = ?');
    byId(`${variant}:other`, () => builds++);
    expect(builds).toBe(2);
  });

  it("read a row (JSON columns included) exactly as Drizzle's own query reads it, on a request's session", async () => {
    const { stack, environmentId } = await createProjectWithStack();
    const created = await internalOk<{ id: string }>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: [stack.id],
      data: { patch: [{ op: "replace", path: "/services/api/image", value: "api:2", old_value: "api:1" }] },
    });
    const session = openSession(env.DB, { mode: "first-primary" });
    const query = byId("test:deployment-by-id", () => undefined);
    const [values] = await bindCompiled(session.db, query, { id: created.id }).raw();
    const viaDrizzle = await createDb(env.DB)
      .select()
      .from(deployments)
      .where(eq(deployments.id, created.id))
      .get();
    expect(values).toBeDefined();
    const row = rowReader(getTableColumns(deployments))(values ?? []);
    expect(row).toEqual(viaDrizzle);
    expect(row.stackIds).toEqual([stack.id]);
    // The statement ran on the session it was bound on: it now has a bookmark.
    expect(session.bookmark()).not.toBeNull();
  });

  it("read a joined row from an offset, and an aliased expression as it comes", async () => {
    const { project, owner } = await createProjectWithStack();
    const selection = {
      ...getTableColumns(projects),
      role: sql<string | null>`${projectMembers.role}`.as("caller_role"),
    };
    const query = compiled("test:project-with-role", (b) =>
      b
        .select(selection)
        .from(projects)
        .leftJoin(
          projectMembers,
          sql`${projectMembers.projectId} = ${projects.id} AND ${projectMembers.accountId} = ${sql.placeholder("accountId")}`,
        )
        .where(eq(projects.id, sql.placeholder("id"))),
    );
    const db = createDb(env.DB);
    const [values] = await bindCompiled(db, query, { id: project.id, accountId: owner.accountId }).raw();
    const row = rowReader(selection)(values ?? []);
    expect(row).toMatchObject({ id: project.id, name: project.name, role: "owner" });
    const [none] = await bindCompiled(db, query, { id: project.id, accountId: "someone-else" }).raw();
    expect(rowReader(selection)(none ?? []).role).toBeNull();
    // Offsets: the same values read as a prefix and a suffix.
    const width = Object.keys(getTableColumns(projects)).length;
    expect(rowReader({ role: selection.role })(values ?? [], width)).toEqual({ role: "owner" });
  });

  it("refuse to bind a statement whose placeholder has no value (absent, or undefined)", () => {
    const query = byId("test:deployment-by-id", () => undefined);
    const db = createDb(env.DB);
    expect(() => bindCompiled(db, query, {})).toThrow(/No value for placeholder "id"/);
    expect(() => bindCompiled(db, query, { id: undefined })).toThrow(/parameter 1 has no value/);
  });
});
