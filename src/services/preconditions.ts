/**
 * `If-Match` (API_CONTRACT §12) for the writes of a record.
 *
 * The comparison and the write are one atomic step without a version column: the service reads
 * the record (it does already, to authorize), compares the listed ETags with the record's
 * (`recordEtag`, the same digest the answer is tagged with), and then writes with
 * `WHERE <every column still holds the value read>` (`unchangedSince`). The ETag is a function
 * of those values, so a write that matches a row writes exactly the state whose ETag matched;
 * of two writers holding the same ETag, the first changes the row and the second matches
 * nothing. The WHERE catches every kind of change, by any writer (the engine, the queue
 * consumer), without each of them having to bump a version. A write that matches nothing is
 * then explained by `explainMiss`: gone (404) or changed (409 with `header.if-match`).
 */
import { and, eq, getTableColumns, isNull, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { ServiceContext } from "../context";
import type { Db } from "../db/client";
import { conflict, notFound } from "../http/errors";
import { recordEtag, strongMatch } from "../http/etag";

export const preconditionFailed = () =>
  conflict("The record has changed: If-Match names none of its current ETags.", [
    { path: "header.if-match", message: "Not the record's current ETag; read the record again." },
  ]);

/** Whether the request carries an `If-Match` that names specific ETags (not `*`). */
export const hasIfMatch = (ctx: ServiceContext): boolean => Array.isArray(ctx.ifMatch);

/**
 * Throws 409 unless the request's `If-Match` names the ETag of `record` (as read); true when
 * the write must then be conditional on the state read. Without If-Match, or with `*` (any
 * current record: the write's own not-found handling covers absence), false.
 */
export async function checkIfMatch(ctx: ServiceContext, record: unknown): Promise<boolean> {
  const list = ctx.ifMatch;
  if (!list || list === "*") return false;
  if (!strongMatch(list, await recordEtag(record))) throw preconditionFailed();
  return true;
}

/** SQL true while every column of `table` still holds its value in `row`. */
export function unchangedSince<T extends SQLiteTable>(table: T, row: T["$inferSelect"]): SQL {
  const values = row as Record<string, unknown>;
  const conditions = Object.entries(getTableColumns(table) as Record<string, SQLiteColumn>).map(
    ([name, column]) => {
      const value = values[name];
      if (value === null || value === undefined) return isNull(column);
      // JSON columns: compared as JSON values, not as the text each writer happened to produce.
      if (column.dataType === "json") return sql`json(${column}) = json(${JSON.stringify(value)})`;
      return eq(column, value);
    },
  );
  return and(...conditions) as SQL;
}

/**
 * After a conditional write matched no row: 404 if the record is gone, 409 (`header.if-match`)
 * if it changed; returns when it is as read (the write failed for another reason of its own).
 */
export async function explainMiss<T extends SQLiteTable & { id: SQLiteColumn }>(
  db: Db,
  table: T,
  row: T["$inferSelect"] & { id: string },
  what: string,
): Promise<void> {
  const current = await db
    .select({ id: table.id })
    .from(table as SQLiteTable)
    .where(and(eq(table.id, row.id), unchangedSince(table, row)))
    .get();
  if (current) return;
  const exists = await db
    .select({ id: table.id })
    .from(table as SQLiteTable)
    .where(eq(table.id, row.id))
    .get();
  if (!exists) throw notFound(what);
  throw preconditionFailed();
}
