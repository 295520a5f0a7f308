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
 *
 * Most writes go through `writeLatest`, with or without If-Match: one that finds the record
 * changed since it read it reads it again and plans itself anew, so what it answers and the audit
 * entry it writes are exactly the change it made (API_CONTRACT §14). Under If-Match it does so only
 * while the record's ETag is still one the request named (`ifMatchGuard`): a row can change in a
 * column its record does not show.
 */
import { and, eq, getTableColumns, isNull, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { ServiceContext } from "../context";
import type { Db } from "../db/client";
import { conflict, notFound } from "../errors";
import { recordEtag, strongMatch } from "../http/etag";
import { type AuditInput, auditEntry } from "./audit/entry";

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

/** Whether a row, read again, still satisfies the request's `If-Match`. */
export type IfMatchGuard<Row> = (row: Row) => Promise<boolean>;

/**
 * `checkIfMatch` for a write that `writeLatest` applies: throws 409 unless the request's
 * `If-Match` names the ETag of `read`'s record, and answers how to hold a row read again to the
 * same precondition (null without If-Match, or with `*`). A row can change without its record
 * changing (a column the record does not show, such as an integration's `failing_since`, which
 * the delivery consumer moves): its ETag is then the one the client named, and the write applies.
 */
export async function ifMatchGuard<Row>(
  ctx: ServiceContext,
  read: Row,
  toRecord: (row: Row) => unknown,
): Promise<IfMatchGuard<Row> | null> {
  if (!(await checkIfMatch(ctx, toRecord(read)))) return null;
  const list = ctx.ifMatch as string[];
  return async (row) => strongMatch(list, await recordEtag(toRecord(row)));
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

type TableWithId = SQLiteTable & { id: SQLiteColumn };
type RowOf<T extends TableWithId> = T["$inferSelect"] & { id: string };

/** Whether the record still holds exactly the values of `row`. */
export async function stillAsRead<T extends TableWithId>(db: Db, table: T, row: RowOf<T>): Promise<boolean> {
  const current = await db
    .select({ id: table.id })
    .from(table as SQLiteTable)
    .where(and(eq(table.id, row.id), unchangedSince(table, row)))
    .get();
  return current !== undefined;
}

/**
 * After a conditional write matched no row: 404 if the record is gone, 409 (`header.if-match`)
 * if it changed; returns when it is as read (the write failed for another reason of its own).
 */
export async function explainMiss<T extends TableWithId>(
  db: Db,
  table: T,
  row: RowOf<T>,
  what: string,
): Promise<void> {
  if (await stillAsRead(db, table, row)) return;
  const exists = await db
    .select({ id: table.id })
    .from(table as SQLiteTable)
    .where(eq(table.id, row.id))
    .get();
  if (!exists) throw notFound(what);
  throw preconditionFailed();
}

/**
 * How often a write re-reads a record that changed under it before giving up. Each round of a
 * race has a winner, so n writers landing at once need up to n attempts; between attempts a
 * loser waits a short random time (growing with the attempt, at most 50 ms) so that the
 * contenders spread out instead of colliding again. An engine reporting every stack of a
 * deployment at once (thirty, in internalUpdateDeployment's tests) sees every report apply;
 * each attempt costs a batch and a read, well within a request's budget.
 */
export const WRITE_ATTEMPTS = 32;

/**
 * And how long, at least, since its first attempt. Where each attempt is slow (a database busy
 * with an organization's move, API_CONTRACT §32: its copy and the triggers that record every
 * change) and writers keep arriving, thirty-two lost rounds passed in 4–5 s, and a change of a
 * variable set among eighteen steady writers answered `409` where without the move every one
 * landed (§32: a moving organization answers as it would otherwise, or `408`). A write now keeps
 * trying for this long whatever its count, still well within a request's budget.
 */
export const WRITE_PATIENCE_MS = 8_000;

/**
 * Whether a write that lost its `attempt`-th race tries again: until it has tried WRITE_ATTEMPTS
 * times and WRITE_PATIENCE_MS have passed since `retries()` was called, as it began.
 */
export function retries(): (attempt: number) => boolean {
  const started = Date.now();
  return (attempt) => attempt < WRITE_ATTEMPTS || Date.now() - started < WRITE_PATIENCE_MS;
}

export const backOff = (attempt: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));

/**
 * Applies a write to the record as it is when the write lands. `write(row)` makes its change
 * conditional on the record still being exactly `row` (`unchangedSince`, or a narrower
 * compare-and-set of its own) and answers undefined when that matched nothing. The record is
 * then read again: gone is `404`; under If-Match (`guard`, from `ifMatchGuard`), a record whose
 * ETag is no longer one the request named is `409 header.if-match`; otherwise the write is
 * planned anew against the record as it now is. So what a write answers, and the audit entry it
 * writes with its change (API_CONTRACT §14), describe exactly the change it made, even when
 * other writers change the record at the same moment; two deletes of one record answer one
 * `204` and one `404`; and a write under If-Match applies to the version it names, or not at
 * all. `check` runs before each attempt (a transition's own refusal of a final state).
 */
export async function writeLatest<T extends TableWithId, R>(
  db: Db,
  table: T,
  first: RowOf<T>,
  write: (row: RowOf<T>) => Promise<R | undefined>,
  opts: { guard: IfMatchGuard<RowOf<T>> | null; what: string; check?: (row: RowOf<T>) => void },
): Promise<R> {
  let row = first;
  const again = retries();
  for (let attempt = 1; ; attempt++) {
    opts.check?.(row);
    const result = await write(row);
    if (result !== undefined) return result;
    const retry = again(attempt);
    if (retry) await backOff(attempt);
    const fresh = (await db
      .select()
      .from(table as SQLiteTable)
      .where(eq(table.id, row.id))
      .get()) as RowOf<T> | undefined;
    if (!fresh) throw notFound(opts.what);
    if (opts.guard && !(await opts.guard(fresh))) throw preconditionFailed();
    if (!retry) {
      throw conflict(
        `The ${opts.what.toLowerCase()} kept changing while this request was applied; try again.`,
      );
    }
    row = fresh;
  }
}

/**
 * Deletes the record as it is when the delete lands (`writeLatest`), with the audit entry
 * `entry(row)` of the row it removes in the same batch, written only if the row went: of two
 * deletes at once one answers 204 and the other 404, and the one entry records what was removed.
 * `follow(row)`: statements between the delete and the entry, each written only if the one
 * before it changed a row (a variable's new version). `cascaded(row)`: a read in the same batch,
 * just before the delete, of the ids of rows the delete takes with it by cascade that must be
 * told of it; answered (none without it).
 */
export async function deleteLatest<T extends TableWithId>(
  ctx: ServiceContext,
  table: T,
  read: RowOf<T>,
  entry: (row: RowOf<T>) => AuditInput,
  opts: {
    guard: IfMatchGuard<RowOf<T>> | null;
    what: string;
    follow?: (row: RowOf<T>) => readonly BatchItem<"sqlite">[];
    cascaded?: (row: RowOf<T>) => BatchItem<"sqlite">;
  },
): Promise<string[]> {
  const { db } = ctx;
  return writeLatest(
    db,
    table,
    read,
    async (row) => {
      const cascaded = opts.cascaded?.(row);
      const remove = db
        .delete(table as SQLiteTable)
        .where(and(eq(table.id, row.id), unchangedSince(table, row)))
        .returning({ id: table.id });
      const rest = [...(opts.follow?.(row) ?? []), auditEntry(ctx, entry(row))] as const;
      const results: unknown[] = cascaded
        ? await db.batch([cascaded, remove, ...rest])
        : [[], ...(await db.batch([remove, ...rest]))];
      const [ids, deleted] = results as [{ id: string }[], unknown[]];
      return deleted[0] ? ids.map(({ id }) => id) : undefined;
    },
    opts,
  );
}
