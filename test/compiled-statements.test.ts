/**
 * Statements whose SQL text is built once per isolate (src/db/compiled.ts): built once per
 * variant, bound per request on the request's own D1 session, and read back exactly as
 * Drizzle reads the same row.
 */
import { env } from "cloudflare:test";
import { eq, getTableColumns, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { bindCompiled, compiled, compiledInsert, rowReader, statementOf } from "../src/db/compiled";
import { auditLog, deployments, projectMembers, projects } from "../src/db/schema";
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
  it("insert a row as Drizzle's own insert writes it (JSON and NULL included), its SQL built once per table and columns", async () => {
    const db = openSession(env.DB, { mode: "first-primary" }).db;
    const entry = (id: string, changes: Record<string, { from: unknown; to: unknown }> | null) => ({
      id,
      orgId: null,
      projectId: `p-${id}`,
      action: "test.compiledInsert",
      targetType: "project",
      targetId: `t-${id}`,
      actorType: "admin" as const,
      actorAccountId: null,
      actorApiKeyId: null,
      requestId: `r-${id}`,
      ip: null,
      userAgent: "vitest",
      changes,
      createdAt: "2026-11-22T00:00:00.000Z",
    });
    const run = crypto.randomUUID();
    const changes = { name: { from: null, to: { nested: ["a", 1, true] } } };
    await db.$client.batch([
      compiledInsert(db, auditLog, entry(`${run}-1`, changes)),
      compiledInsert(db, auditLog, entry(`${run}-2`, null)),
      statementOf(db, db.insert(auditLog).values(entry(`${run}-3`, changes))),
      statementOf(db, db.insert(auditLog).values(entry(`${run}-4`, null))),
    ]);
    // Built once: the cached text answers for the same table and columns, whatever the values.
    const keys = Object.keys(entry("x", null)).join(",");
    const cached = compiled(`insert:audit_log:${keys}`, () => {
      throw new Error("built again");
    });
    expect(cached.sql).toMatch(/^insert into "audit_log"/i);
    const { results } = await env.DB.prepare(
      "SELECT id, project_id, request_id, changes, changes IS NULL AS is_null FROM audit_log WHERE id LIKE ? ORDER BY id",
    )
      .bind(`${run}-%`)
      .all<{ id: string; project_id: string; request_id: string; changes: string | null; is_null: number }>();
    expect(results.map((r) => r.id)).toEqual([1, 2, 3, 4].map((n) => `${run}-${n}`));
    // Each row has its own values (none frozen at compile time) …
    expect(results.map((r) => r.request_id)).toEqual([1, 2, 3, 4].map((n) => `r-${run}-${n}`));
    // … the JSON column holds the same text Drizzle writes, and a null is SQL NULL, not `null`.
    expect(results[0]?.changes).toBe(results[2]?.changes);
    expect(JSON.parse(results[0]?.changes ?? "")).toEqual(changes);
    expect(results.map((r) => r.is_null)).toEqual([0, 1, 0, 1]);
  });
});
