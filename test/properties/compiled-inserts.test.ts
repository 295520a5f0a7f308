/**
 * Writes whose SQL text is built once per isolate (src/db/compiled-inserts.ts): the same statement
 * Drizzle's builder writes for the same row (its text, and each value as the column encodes it:
 * JSON, booleans, a left-out column's default), the same row stored, an item of `db.batch` beside
 * the builder's own statements, one transaction with them.
 */
import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { insertRow } from "../../src/db/compiled-inserts";
import { apiKeys, notificationIntegrations, projects } from "../../src/db/schema";
import { openSession } from "../../src/db/session";
import { newId } from "../../src/lib/ids";
import { nowIso } from "../../src/lib/time";
import { createOrg, createOwnedProject } from "../helpers/factories";

const db = () => openSession(env.DB, { mode: "first-primary" }).db;

/**
 * What an INSERT of one row writes, column by column: its column list paired with its VALUES list,
 * each `?` taking the next bound value and a literal `null` standing for itself (Drizzle writes a
 * left-out nullable column so; the compiled statement binds null there).
 */
function written({ sql: text, params }: { sql: string; params: unknown[] }): Record<string, unknown> {
  const match = /^insert into "\w+" \(([^)]*)\) values \(([^)]*)\)$/.exec(text);
  if (!match) throw new Error(`not a one-row INSERT: ${text}`);
  const columns = (match[1] ?? "").split(", ").map((c) => c.replaceAll('"', ""));
  const values = (match[2] ?? "").split(", ");
  expect(values).toHaveLength(columns.length);
  let next = 0;
  return Object.fromEntries(
    columns.map((c, i) => [
      c,
      values[i] === "?" ? params[next++] : values[i] === "null" ? null : `literal ${values[i]}`,
    ]),
  );
}

/** Drizzle's own statement for `row` and the compiled one, as what each writes to each column. */
function both<T extends SQLiteTable>(table: T, row: T["$inferInsert"]) {
  const d = db();
  return {
    compiled: written(insertRow(d, table, row).toSQL()),
    drizzle: written(d.insert(table).values(row).toSQL()),
  };
}

describe("insertRow", () => {
  it("writes the statement Drizzle's builder writes: every column, nulls, JSON and booleans encoded", () => {
    const now = nowIso();
    const project = {
      id: newId(),
      orgId: newId(),
      name: "Compiled",
      nameKey: "compiled",
      description: null,
      icon: "emoji:🚀",
      repoId: null,
      defaultEnvironmentId: newId(),
      connectionStatus: "connected" as const,
      createdAt: now,
      updatedAt: now,
    };
    const integration = {
      id: newId(),
      projectId: newId(),
      type: "webhook" as const,
      url: "https://example.com/hook",
      configuration: {
        deployments_failed: true,
        deployments_in_progress: false,
        deployments_succeeded: true,
        changelog: false,
        promotions: false,
        services_in_alarm: false,
        services_ok: false,
      },
      signingSecret: "whsec_x",
      enabled: false,
      createdAt: now,
      updatedAt: now,
    };
    for (const [table, row] of [
      [projects, project],
      [notificationIntegrations, integration],
      // Left out: `enabled` takes its default (true, bound as 1), the other optional columns null.
      [notificationIntegrations, { ...integration, enabled: undefined }],
    ] as const) {
      const { compiled, drizzle } = both(table as SQLiteTable, row);
      expect(compiled).toEqual(drizzle);
    }
  });

  it('gives a left-out JSON column its default as Drizzle does (a key\'s scopes: ["*"])', () => {
    const key = {
      id: newId(),
      orgId: newId(),
      accountId: newId(),
      createdBy: newId(),
      keyHash: "0".repeat(64),
      createdAt: nowIso(),
    };
    const { compiled, drizzle } = both(apiKeys, key);
    expect(compiled).toEqual(drizzle);
    expect(compiled.scopes).toBe('["*"]');
  });

  it("refuses an SQL expression for a value: such a statement is Drizzle's to build", () => {
    expect(() =>
      insertRow(db(), projects, {
        id: newId(),
        orgId: sql`(SELECT 1)` as unknown as string,
        name: "x",
        nameKey: "x",
        defaultEnvironmentId: newId(),
        connectionStatus: "connected",
        createdAt: nowIso(),
        updatedAt: nowIso(),
      }),
    ).toThrow(/SQL expression/);
  });

  it("stores what Drizzle's insert stores, and runs in one db.batch with the builder's statements", async () => {
    const org = await createOrg();
    const now = nowIso();
    const environment = newId();
    const row = (id: string, name: string) => ({
      id,
      orgId: org.id,
      name,
      nameKey: name.toLowerCase(),
      description: "d",
      icon: null,
      repoId: null,
      defaultEnvironmentId: environment,
      connectionStatus: "connected" as const,
      createdAt: now,
      updatedAt: now,
    });
    const [a, b] = [newId(), newId()];
    const d = db();
    const results = await d.batch([
      insertRow(d, projects, row(a, `Compiled-${a}`)),
      d.insert(projects).values(row(b, `Builder-${b}`)),
    ]);
    // D1 counts what a statement's triggers change too: each project also counts in its
    // organization's `projects` (API_CONTRACT §29, migration 0015).
    expect(results.map((r) => r.meta.changes)).toEqual([2, 2]);
    const read = createDb(env.DB);
    const [stored] = await read.select().from(projects).where(eq(projects.id, a));
    const [built] = await read.select().from(projects).where(eq(projects.id, b));
    expect(stored).toEqual({
      ...built,
      id: a,
      name: `Compiled-${a}`,
      nameKey: `compiled-${a}`.toLowerCase(),
    });
  });

  it("fails its batch whole: a statement after it that fails leaves no row of it", async () => {
    const { project } = await createOwnedProject();
    const d = db();
    const now = nowIso();
    const fresh = newId();
    await expect(
      d.batch([
        insertRow(d, projects, {
          id: fresh,
          orgId: project.org_id,
          name: `Rolled-back-${fresh}`,
          nameKey: `rolled-back-${fresh}`.toLowerCase(),
          defaultEnvironmentId: newId(),
          connectionStatus: "connected",
          createdAt: now,
          updatedAt: now,
        }),
        // The name is taken (case-insensitive key): a unique violation.
        insertRow(d, projects, {
          id: newId(),
          orgId: project.org_id,
          name: project.name,
          nameKey: project.name.toLowerCase(),
          defaultEnvironmentId: newId(),
          connectionStatus: "connected",
          createdAt: now,
          updatedAt: now,
        }),
      ]),
    ).rejects.toThrow(/UNIQUE/);
    const rows = await createDb(env.DB).select().from(projects).where(eq(projects.id, fresh));
    expect(rows).toEqual([]);
  });

  it("binds values in the column order of the text, whatever order the row names them in", () => {
    const now = nowIso();
    const forward = insertRow(db(), projects, {
      id: "p1",
      orgId: "o1",
      name: "n",
      nameKey: "n",
      defaultEnvironmentId: "e1",
      connectionStatus: "connected",
      createdAt: now,
      updatedAt: now,
    }).toSQL();
    const backward = insertRow(db(), projects, {
      updatedAt: now,
      createdAt: now,
      connectionStatus: "connected",
      defaultEnvironmentId: "e1",
      nameKey: "n",
      name: "n",
      orgId: "o1",
      id: "p1",
    }).toSQL();
    expect(backward).toEqual(forward);
  });
});
