/**
 * src/db/keyed-select.ts: an INSERT … SELECT's values follow the table's columns by name, whatever
 * order the row names them in, so a column added mid-table takes its own value and shifts none.
 */
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { keyedSelection, keyedSelectList } from "../../src/db/keyed-select";

/** A table as if `added` had been put mid-table after `first` and `last` were written. */
const table = sqliteTable("keyed_select_probe", {
  first: text("first").notNull(),
  added: integer("added_col"),
  data: text("data", { mode: "json" }).$type<{ n: number }>(),
  last: text("last").notNull(),
});

const other = sqliteTable("keyed_select_source", { id: text("id").primaryKey(), label: text("label") });

describe("keyedSelectList", () => {
  it("lists every column in the table's order, each value under its own column", () => {
    const db = drizzle(env.DB);
    // The row names its columns in another order than the table's.
    const insert = db
      .insert(table)
      .select(
        sql`SELECT ${keyedSelectList(table, { last: "L", data: { n: 1 }, first: "F", added: sql`1 + 1` })} WHERE 1`,
      );
    expect(insert.toSQL()).toEqual({
      sql: 'insert into "keyed_select_probe" ("first", "added_col", "data", "last") SELECT ? as "first", 1 + 1 as "added_col", ? as "data", ? as "last" WHERE 1',
      // A value goes through its column's encoding: the JSON column's object as its JSON.
      params: ["F", '{"n":1}', "L"],
    });
  });

  it("is typed against the table: every column must be named", () => {
    // @ts-expect-error `added` is missing
    expect(() => keyedSelectList(table, { first: "F", data: null, last: "L" })).toThrow(
      "no value for keyed_select_probe.added_col",
    );
  });
});

describe("keyedSelection", () => {
  it("gives drizzle's select builder the table's keys in its order, a column of the source too", () => {
    const db = drizzle(env.DB);
    const insert = db
      .insert(table)
      .select(
        db
          .select(keyedSelection(table, { data: null, last: other.id, added: 7, first: other.label }))
          .from(other),
      );
    expect(insert.toSQL()).toEqual({
      sql: 'insert into "keyed_select_probe" ("first", "added_col", "data", "last") select "label" as "first", ? as "added_col", ? as "data", "id" as "last" from "keyed_select_source"',
      params: [7, null],
    });
  });
});
