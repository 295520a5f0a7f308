/**
 * The statements that write a move's rows (./copy.ts) as JSON: read as objects from the source,
 * written by one `INSERT … SELECT … FROM json_each(?)` per table and chunk (D1 binds at most 100
 * parameters, but one parameter may hold a megabyte), which keeps every value's type (text,
 * integer, null) as SQLite stored it. Every value bound stays within D1's 2,000,000 bytes: chunks
 * are cut by UTF-8 bytes (`bySize`), and a row too large for a chunk of its own carries its long
 * strings as parameters of their own (`upsertStatement`).
 */
import type { Db } from "../../db/client";
import { inGroups } from "../../lib/groups";
import { utf8Bytes } from "../../lib/utf8-bytes";
import { type MovedTable, type ParentKey, shapeOf } from "./tables";

/** The most JSON one statement carries, in UTF-8 bytes (D1 allows 2 MB per value; half of it leaves room). */
const STATEMENT_BYTES = 900_000;

export type Row = Record<string, unknown>;
type D1 = Pick<D1Database, "prepare" | "batch">;

/** The D1 client under a Drizzle handle (src/db/client.ts): a session, or a binding in tests. */
export const d1 = (db: Db): D1 => db.$client as unknown as D1;

export const quote = (name: string) => `"${name}"`;

/** SQL true for a row (`value` of json_each) whose `parent` is null or held by the target. */
const parentHeld = (parent: ParentKey) => {
  const value = (column: string) => `json_extract(value, '$.${column}')`;
  const matches = parent.columns.map(
    (column, i) => `${quote(parent.parentColumns[i] as string)} = ${value(column)}`,
  );
  const absent = parent.columns.map((column) => `${value(column)} IS NULL`).join(" OR ");
  return `(${absent} OR EXISTS (SELECT 1 FROM ${quote(parent.table)} WHERE ${matches.join(" AND ")}))`;
};

/**
 * A string longer than this, in a row whose JSON outgrows STATEMENT_BYTES, travels as a parameter
 * of its own rather than inside the rows' JSON (`upsertStatement`).
 */
const OWN_PARAMETER_CHARS = 64 * 1024;

/**
 * The upsert of `rows`, carried as one JSON parameter read by `json_each`. A row alone in its group
 * because its JSON outgrows STATEMENT_BYTES (a deployment's `data`, up to 1.9 MB, is text whose
 * quotes and backslashes the JSON escapes once more: past D1's 2,000,000 bytes a value) carries its
 * long strings as parameters of their own, each as stored, so no value grows on its way.
 */
export function upsertStatement(
  db: D1,
  table: string,
  primaryKey: readonly string[],
  rows: Row[],
  parents: readonly ParentKey[] = [],
) {
  const columns = Object.keys(rows[0] ?? {});
  const carried = JSON.stringify(rows);
  const [only] = rows;
  const own =
    rows.length === 1 && only && utf8Bytes(carried) > STATEMENT_BYTES
      ? columns.filter(
          (column) =>
            typeof only[column] === "string" && (only[column] as string).length > OWN_PARAMETER_CHARS,
        )
      : [];
  const values = columns
    .map((column) =>
      own.includes(column) ? `?${2 + own.indexOf(column)}` : `json_extract(value, '$.${column}')`,
    )
    .join(", ");
  const updates = columns.filter((column) => !primaryKey.includes(column));
  const onConflict =
    updates.length > 0
      ? `DO UPDATE SET ${updates.map((column) => `${quote(column)} = excluded.${quote(column)}`).join(", ")}`
      : "DO NOTHING";
  const json =
    own.length > 0
      ? JSON.stringify([{ ...only, ...Object.fromEntries(own.map((c) => [c, null])) }])
      : carried;
  return db
    .prepare(
      `INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) SELECT ${values} FROM json_each(?1) WHERE ${parents.map(parentHeld).join(" AND ") || "true"} ON CONFLICT (${primaryKey.map(quote).join(", ")}) ${onConflict}`,
    )
    .bind(json, ...own.map((column) => (only as Row)[column]));
}

/**
 * Moves out of the way the target's rows that hold the unique values `rows` bring under another
 * key (./tables.ts, `unique`): stale copies, which a recorded change corrects later.
 */
export function asideStatement(db: D1, spec: MovedTable, rows: Row[]) {
  const { name, primaryKey } = shapeOf(spec.table);
  const unique = spec.unique as NonNullable<MovedTable["unique"]>;
  const same = unique.columns.map((column) => `s.${quote(column)} = json_extract(j.value, '$.${column}')`);
  const other = primaryKey.map((column) => `s.${quote(column)} IS NOT json_extract(j.value, '$.${column}')`);
  const stale = `SELECT s.rowid FROM ${quote(name)} s JOIN json_each(?) j ON ${same.join(" AND ")} WHERE ${other.join(" OR ")}`;
  const text =
    unique.set === null
      ? `DELETE FROM ${quote(name)} WHERE rowid IN (${stale})`
      : `UPDATE ${quote(name)} SET ${unique.set} WHERE rowid IN (${stale})`;
  // Only the columns it compares: a row's other values may be long (a project's icon).
  const keyed = [...unique.columns, ...primaryKey];
  return db
    .prepare(text)
    .bind(
      JSON.stringify(rows.map((row) => Object.fromEntries(keyed.map((column) => [column, row[column]])))),
    );
}

/** `items` in groups whose JSON stays under STATEMENT_BYTES each, counted in UTF-8 bytes. */
export const bySize = <T>(items: readonly T[]): T[][] =>
  inGroups(items, (item) => utf8Bytes(JSON.stringify(item)) + 1, STATEMENT_BYTES);
