/**
 * Statements whose SQL text is built once per isolate (src/db/compiled.ts): built once per
 * variant, bound per request on the request's own D1 session, and read back exactly as
 * Drizzle reads the same row.
 */
import { env } from "cloudflare:test";
import { eq, getTableColumns, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { createDb } from "../../src/db/client";
import {
  bindCompiled,
  columnValues,
  compiled,
  compiledFrom,
  declaredStatements,
  prebuilt,
  rowReader,
} from "../../src/db/compiled";
import { type PageFilter, pageRequest, tablePage } from "../../src/db/pagination";
import { PREBUILT } from "../../src/db/prebuilt-statements";
import { deployments, notificationIntegrations, projectMembers, projects } from "../../src/db/schema";
import { openSession } from "../../src/db/session";
import { internalOk } from "../helpers/api";
import { createIntegration, createProjectWithStack } from "../helpers/factories";

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

  it("a table page (tablePage) reads every column as Drizzle does, filtered by one value or a list, from a D1 batch", async () => {
    const { project } = await createProjectWithStack();
    await createIntegration(project.id, { configuration: { changelog: true, deployments_failed: true } });
    await createIntegration(project.id, { type: "slack", url: "https://hooks.slack.com/services/T1/B1/x" });
    await createIntegration(project.id);
    const db = createDb(env.DB);
    const byProject = eq(notificationIntegrations.projectId, project.id);
    const viaDrizzle = await db
      .select()
      .from(notificationIntegrations)
      .where(byProject)
      .orderBy(notificationIntegrations.createdAt, notificationIntegrations.id)
      .all();
    expect(viaDrizzle).toHaveLength(3);
    // Read as guardedPage reads a page: from a D1 batch, whose rows are objects.
    const pageOf = async (filters: PageFilter[]) => {
      const page = pageRequest({ limit: 2, sort_by: "created_at" });
      const { statement, read } = tablePage(db, notificationIntegrations, filters, page);
      const [result] = await env.DB.batch<Record<string, unknown>>([statement]);
      return (result?.results ?? []).map((row) => read(columnValues(row)));
    };
    // LIMIT page.limit + 1: the page and the row that says there is more.
    expect(await pageOf([[notificationIntegrations.projectId, project.id]])).toEqual(viaDrizzle);
    const [first, second, third] = viaDrizzle;
    expect(
      await pageOf([
        [notificationIntegrations.projectId, project.id],
        [notificationIntegrations.id, [third?.id ?? "", "not-an-id", first?.id ?? ""]],
      ]),
    ).toEqual([first, third]);
    expect(await pageOf([[notificationIntegrations.id, [second?.id ?? ""]]])).toEqual([second]);
    expect(await pageOf([[notificationIntegrations.projectId, "another-project"]])).toEqual([]);
  });
});

describe("prebuilt statements (src/db/prebuilt-statements.ts)", () => {
  const deploymentById = (b: Parameters<Parameters<typeof compiled>[1]>[0]) =>
    b
      .select(getTableColumns(deployments))
      .from(deployments)
      .where(eq(deployments.id, sql.placeholder("id")));

  it("take their text from the generated table and never build it; bind its placeholders by name", async () => {
    const { project } = await createProjectWithStack();
    const projectById = createDb(env.DB)
      .select()
      .from(projects)
      .where(eq(projects.id, sql.placeholder("id")));
    const variant = `test:prebuilt:${crypto.randomUUID()}`;
    const query = compiledFrom(
      { [variant]: { sql: projectById.toSQL().sql, params: ["id"] } },
      variant,
      () => {
        throw new Error("built, though the table holds it");
      },
    );
    expect(query.sql).toBe(projectById.toSQL().sql);
    const [values] = await bindCompiled(createDb(env.DB), query, { id: project.id }).raw();
    expect(rowReader(getTableColumns(projects))(values ?? [])).toEqual(
      await createDb(env.DB).select().from(projects).where(eq(projects.id, project.id)).get(),
    );
  });

  it("a variant the table does not hold is built on its first use, once", () => {
    let builds = 0;
    const variant = `test:unlisted:${crypto.randomUUID()}`;
    const build = (b: Parameters<typeof deploymentById>[0]) => {
      builds++;
      return deploymentById(b);
    };
    const first = compiledFrom({}, variant, build);
    expect(compiledFrom({}, variant, build)).toBe(first);
    expect(builds).toBe(1);
    expect(first.sql).toContain('"deployments"."id" = ?');
  });

  it("refuse a variant declared twice, and a value bound in place of a placeholder", () => {
    const variant = `test:declared:${crypto.randomUUID()}`;
    prebuilt(variant, deploymentById);
    expect(() => prebuilt(variant, deploymentById)).toThrow(/declared twice/);
    const literal = `test:literal:${crypto.randomUUID()}`;
    prebuilt(literal, (b) => b.select().from(deployments).where(eq(deployments.id, "a value")));
    expect(() => declaredStatements([literal])).toThrow(/parameter 1 is a value, not a sql.placeholder/);
    expect(() => declaredStatements(["test:nowhere"])).toThrow(/not declared/);
  });

  it("each generated statement is what its declaration builds in the Worker, and runs on the migrated schema", async () => {
    const generated = Object.entries(PREBUILT);
    expect(generated.length).toBeGreaterThan(0);
    // Every module loaded, as scripts/statements.ts loads them: the document builds every operation.
    expect((await createApp().request("https://statements.test/openapi.json", {}, env)).status).toBe(200);
    // Each generated variant is declared, and builds here the same text and placeholders.
    expect(declaredStatements(Object.keys(PREBUILT))).toEqual(PREBUILT);
    for (const [, statement] of generated) {
      // SQLite prepares the text against the real tables: every name in it exists.
      const explained = await env.DB.prepare(`EXPLAIN ${statement.sql}`)
        .bind(...statement.params.map(() => null))
        .all();
      expect(explained.results.length).toBeGreaterThan(0);
    }
  });
});
