/**
 * src/db/client.ts makes its Drizzle handle as drizzle-orm/d1's `drizzle(client)` does, without
 * going through it (bench/README.md, "Bundle"): the two must stay the same handle, whatever a
 * Drizzle upgrade changes in `drizzle()`.
 */
import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { organizations } from "../../src/db/schema";

describe("createDb", () => {
  it("builds the SQL drizzle(client) builds, runs it on the same client, and keeps no relational schema", async () => {
    const ours = createDb(env.DB);
    const theirs = drizzle(env.DB);
    const id = `db-client-${crypto.randomUUID()}`;
    const queries = (db: typeof ours) => [
      db.select().from(organizations).where(eq(organizations.id, id)).toSQL(),
      db.insert(organizations).values({ id, name: "n", createdAt: "2026-01-01T00:00:00.000Z" }).toSQL(),
      db
        .update(organizations)
        .set({ name: sql`upper(${organizations.name})` })
        .where(eq(organizations.id, id))
        .toSQL(),
    ];
    expect(queries(ours)).toEqual(queries(theirs as unknown as typeof ours));
    expect(ours.$client).toBe(env.DB);
    expect(ours._).toEqual(theirs._);
    // No relational queries: `query` is left out of `Db` (the deployed build has none of their code).
    expect("query" in ours && Object.keys(ours.query as object)).toEqual(Object.keys(theirs.query));
    // One handle's write is the other's read, through batch and a single statement alike.
    await ours.batch([
      ours.insert(organizations).values({ id, name: "n", createdAt: "2026-01-01T00:00:00.000Z" }),
      ours.update(organizations).set({ name: "renamed" }).where(eq(organizations.id, id)),
    ]);
    expect(await theirs.select().from(organizations).where(eq(organizations.id, id)).get()).toEqual(
      await ours.select().from(organizations).where(eq(organizations.id, id)).get(),
    );
    expect((await ours.select().from(organizations).where(eq(organizations.id, id)).get())?.name).toBe(
      "renamed",
    );
    await ours.delete(organizations).where(eq(organizations.id, id)).run();
  });
});
