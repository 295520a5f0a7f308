/**
 * The row of an `INSERT … SELECT`, keyed by column. Drizzle writes such an INSERT's column list
 * itself: every insertable column, in the table's order. The SELECT must produce its values in
 * that same order, and SQLite pairs the two by position only, so a SELECT list written by hand in
 * "the table's order" would silently shift values into the wrong columns once a column is added
 * mid-table. Here the row is one object naming every column (typed against the table's insert
 * type, so a column added to the table fails to compile until its value is given), and the SELECT
 * list is derived from it by walking the table's own column map: the very order of the INSERT's
 * column list, so each value lands in the column it is named for. Each expression is also aliased
 * as its column, so the SQL reads (and tests check) as pairs.
 */
import { Column, getTableColumns, getTableName, is, SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";

type Insert<T extends SQLiteTable> = T["$inferInsert"];

/**
 * Every insertable column of `T`, none optional: its value (bound through the column's own
 * encoding, as `.values()` would: a JSON column's object is stored as its JSON), or an SQL
 * expression, or a column of the table the SELECT reads from.
 */
export type KeyedRow<T extends SQLiteTable> = {
  [K in keyof Insert<T>]-?: Exclude<Insert<T>[K], undefined> | SQL | SQLiteColumn;
};

/** The SELECT's fields: each column's expression aliased as that column, in the table's order. */
export type KeyedSelection<T extends SQLiteTable> = { [K in keyof Insert<T>]-?: SQL.Aliased };

/** Drizzle's own rule for the INSERT's column list: a generated column (but by default) is left out. */
export function inserted(column: Column): boolean {
  return column.generated === undefined || column.generated.type === "byDefault";
}

/** Each insertable column's key, name and expression, in the table's order. */
function keyedFields<T extends SQLiteTable>(table: T, row: KeyedRow<T>) {
  const values = new Map<string, unknown>(Object.entries(row));
  return Object.entries(getTableColumns(table))
    .filter(([, column]) => inserted(column))
    .map(([key, column]) => {
      // The type requires every column; this guards a row built around it.
      if (!values.has(key)) throw new Error(`no value for ${getTableName(table)}.${column.name}`);
      const value = values.get(key);
      const expression =
        is(value, SQL) || is(value, Column) ? sql`${value}` : sql`${sql.param(value, column)}`;
      return { key, name: column.name, expression };
    });
}

/**
 * The fields for `db.insert(table).select(db.select(keyedSelection(table, row)).from(…))`, which
 * drizzle also checks against the table (the same keys, in the same order).
 */
export function keyedSelection<T extends SQLiteTable>(table: T, row: KeyedRow<T>): KeyedSelection<T> {
  const fields = keyedFields(table, row).map(({ key, name, expression }) => [key, expression.as(name)]);
  // One field per insertable column, under the table's own keys (keyedFields).
  return Object.fromEntries(fields) as KeyedSelection<T>;
}

/**
 * The same as a SELECT list, for a SELECT drizzle's builder cannot write (one with no FROM):
 * `db.insert(table).select(sql\`SELECT ${keyedSelectList(table, row)} WHERE …\`)`.
 */
export function keyedSelectList<T extends SQLiteTable>(table: T, row: KeyedRow<T>): SQL {
  // Spelled out: an `SQL.Aliased` inside a template renders as its alias alone (a reference).
  const items = keyedFields(table, row).map(
    ({ name, expression }) => sql`${expression} as ${sql.identifier(name)}`,
  );
  return sql.join(items, sql`, `);
}
