/**
 * Keyset pagination shared by every list (API_CONTRACT §4).
 *
 * A cursor is standard base64 of `{"v":1,"o":"asc"|"desc","f":<filter key>,"c":<created_at>,"i":<id>}`:
 * the position of the last record of a page, bound to the order and filter it was made under.
 * A page is `WHERE (created_at, id) > (c, i) ORDER BY created_at, id LIMIT n+1` (or the
 * mirror for descending order), served from a (scope, created_at, id) index: its cost
 * does not grow with depth, and no record that exists for the whole walk is repeated or skipped.
 */
import { and, asc, desc, eq, getTableName, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { decodeBase64, encodeBase64 } from "hono/utils/encode";
import { badInput } from "../errors";
import { isId } from "../lib/ids";
import type { Db } from "./client";
import { bindCompiled, compiled, tableReader } from "./compiled";

export const SORT_VALUES = ["created_at", "-created_at", "+created_at"] as const;
export type SortBy = (typeof SORT_VALUES)[number];
export type SortDirection = "asc" | "desc";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 240;

export type ListParams = { after?: string | undefined; limit: number; sort_by: SortBy };

export type PageRequest = {
  direction: SortDirection;
  limit: number;
  filter: string;
  position?: { createdAt: string; id: string };
};

export type Page<T> = { data: T[]; has_more: boolean; next_page?: string };

type CursorPayload = { v: 1; o: SortDirection; f: string; c: string; i: string };

export function sortDirection(sortBy: SortBy): SortDirection {
  return sortBy === "-created_at" ? "desc" : "asc";
}

const toBase64 = (text: string) => encodeBase64(new TextEncoder().encode(text).slice().buffer);
const fromBase64 = (b64: string) =>
  new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(decodeBase64(b64));

export function encodeCursor(
  direction: SortDirection,
  filter: string,
  createdAt: string,
  id: string,
): string {
  const payload: CursorPayload = { v: 1, o: direction, f: filter, c: createdAt, i: id };
  return toBase64(JSON.stringify(payload));
}

const invalidCursor = (why: string) =>
  badInput("The `after` cursor is not valid for this list.", [{ path: "after", message: why }]);

/**
 * Reads an `after` cursor: standard or URL-safe base64, a space read as `+`
 * (a raw `+` in a query string arrives as a space).
 */
export function decodeCursor(raw: string, direction: SortDirection, filter: string): PageRequest["position"] {
  const payload = cursorPayload(raw);
  if (isNumberedPayload(payload)) throw invalidCursor(OTHER_KIND);
  if (!isCursorPayload(payload)) throw invalidCursor("Does not decode to a cursor.");
  if (payload.o !== direction) throw invalidCursor("Made under another sort order.");
  if (payload.f !== filter) throw invalidCursor("Made under another filter.");
  return { createdAt: payload.c, id: payload.i };
}

/** The JSON a cursor's base64 holds (any shape: each kind of cursor checks its own). */
function cursorPayload(raw: string): unknown {
  const normalized = raw.replace(/ /g, "+").replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(normalized)) throw invalidCursor("Not a base64 string.");
  const unpadded = normalized.replace(/=+$/, "");
  if (unpadded.length % 4 === 1) throw invalidCursor("Not a base64 string.");
  try {
    return JSON.parse(fromBase64(unpadded + "=".repeat((4 - (unpadded.length % 4)) % 4)));
  } catch {
    throw invalidCursor("Does not decode to a cursor.");
  }
}

function isCursorPayload(value: unknown): value is CursorPayload {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    p.v === 1 &&
    (p.o === "asc" || p.o === "desc") &&
    typeof p.f === "string" &&
    typeof p.c === "string" &&
    typeof p.i === "string" &&
    STORED_TIMESTAMP.test(p.c) &&
    // A real instant (not `9999-99-99T99:99:99.999Z`), written as the service writes it.
    realInstant(p.c) &&
    isId(p.i)
  );
}

/** A position is a record's `created_at` as stored (RFC 3339 UTC, milliseconds) and its identifier. */
const STORED_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function realInstant(text: string): boolean {
  const time = Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString() === text;
}

/** Turns validated list query parameters (and the list's canonical filter key) into a page request. */
export function pageRequest(params: ListParams, filter = ""): PageRequest {
  const direction = sortDirection(params.sort_by);
  const position = params.after === undefined ? undefined : decodeCursor(params.after, direction, filter);
  return { direction, limit: params.limit, filter, position };
}

type KeysetColumns = { createdAt: SQLiteColumn; id: SQLiteColumn };

function keysetOf(
  cols: KeysetColumns,
  direction: SortDirection,
  after: { createdAt: unknown; id: unknown } | undefined,
): { where: SQL | undefined; orderBy: SQL[] } {
  const order = direction === "asc" ? asc : desc;
  const where = after
    ? sql`(${cols.createdAt}, ${cols.id}) ${sql.raw(direction === "asc" ? ">" : "<")} (${after.createdAt}, ${after.id})`
    : undefined;
  return { where, orderBy: [order(cols.createdAt), order(cols.id)] };
}

/** The WHERE fragment (undefined on the first page) and ORDER BY of a keyset page. */
export function keyset(cols: KeysetColumns, page: PageRequest): { where: SQL | undefined; orderBy: SQL[] } {
  return keysetOf(cols, page.direction, page.position);
}

/**
 * The same for a compiled statement (src/db/compiled.ts): the position is read from the
 * `afterCreatedAt` and `afterId` placeholders and the limit from `limit` (`pageValues`);
 * `variant` names what changes the text (direction, and whether there is a position).
 */
export function compiledKeyset(cols: KeysetColumns, page: PageRequest) {
  const after = page.position
    ? { createdAt: sql.placeholder("afterCreatedAt"), id: sql.placeholder("afterId") }
    : undefined;
  return {
    variant: `${page.direction}${page.position ? "+" : ""}`,
    limit: sql.placeholder("limit"),
    ...keysetOf(cols, page.direction, after),
  };
}

/** The values of `compiledKeyset`'s placeholders. */
export function pageValues(page: PageRequest): Record<string, unknown> {
  return { afterCreatedAt: page.position?.createdAt, afterId: page.position?.id, limit: page.limit + 1 };
}

/** Rows fetched with LIMIT page.limit + 1 → the envelope. */
export function toPage<Row, Item>(
  rows: Row[],
  page: PageRequest,
  key: (row: Row) => { createdAt: string; id: string },
  shape: (row: Row) => Item,
  cut = false,
): Page<Item> {
  return envelopeOf(
    rows,
    page.limit,
    shape,
    (last) => {
      const k = key(last);
      return encodeCursor(page.direction, page.filter, k.createdAt, k.id);
    },
    cut,
  );
}

/**
 * Rows fetched with LIMIT limit + 1 → the envelope, the cursor made from the last row shown.
 * `cut`: the rows are fewer than the query found, cut short by their size (a list whose records
 * can be large, src/services/audit/log.ts): more follow, from the last row shown.
 */
function envelopeOf<Row, Item>(
  rows: Row[],
  limit: number,
  shape: (row: Row) => Item,
  cursorOf: (last: Row) => string,
  cut = false,
): Page<Item> {
  const hasMore = cut || rows.length > limit;
  const visible = rows.length > limit ? rows.slice(0, limit) : rows;
  const result: Page<Item> = { data: visible.map(shape), has_more: hasMore };
  const last = visible[visible.length - 1];
  if (hasMore && last) result.next_page = cursorOf(last);
  return result;
}

type KeysetTable = SQLiteTable & { createdAt: SQLiteColumn; id: SQLiteColumn };

/** A page's statement on the request's session, and how a row of its values is read. */
export type PageQuery<Row> = { statement: D1PreparedStatement; read: (values: readonly unknown[]) => Row };

/**
 * What a single-table page is narrowed to: each a column equal to a value, or (a list) one of
 * several values. Part of the compiled statement's variant by column and kind, never by value.
 */
export type PageFilter = readonly [column: SQLiteColumn, value: string | readonly string[]];

/**
 * One keyset page of `table`'s rows matching every filter (every column, `LIMIT page.limit + 1`),
 * compiled once per isolate and variant (src/db/compiled.ts), as a statement to run in one batch
 * with the lookup that authorizes it (src/services/lookup.ts `guardedPage`). A list filter is one
 * JSON parameter (`json_each`), whatever its length. (Lists that join or project columns build
 * theirs from `keyset` and `toPage`.)
 */
export function tablePage<T extends KeysetTable>(
  db: Db,
  table: T,
  filters: readonly PageFilter[],
  page: PageRequest,
): PageQuery<T["$inferSelect"]> {
  const { query, values } = tablePageQuery(table, filters, page);
  return { statement: bindCompiled(db, query, values), read: tableReader(table) };
}

/** `tablePage`'s compiled statement and its values; apart, so that its plan can be tested. */
export function tablePageQuery(table: KeysetTable, filters: readonly PageFilter[], page: PageRequest) {
  const keys = compiledKeyset({ createdAt: table.createdAt, id: table.id }, page);
  const shape = filters.map(([column, value]) => `${column.name}${typeof value === "string" ? "" : "[]"}`);
  const query = compiled(`page:${getTableName(table)}:${shape.join(",")}:${keys.variant}`, (b) =>
    b
      .select()
      .from(table as SQLiteTable)
      .where(
        and(
          ...filters.map(([column, value], i) =>
            typeof value === "string"
              ? eq(column, sql.placeholder(`f${i}`))
              : sql`${column} IN (SELECT value FROM json_each(${sql.placeholder(`f${i}`)}))`,
          ),
          keys.where,
        ),
      )
      .orderBy(...keys.orderBy)
      .limit(keys.limit),
  );
  const values: Record<string, unknown> = pageValues(page);
  filters.forEach(([, value], i) => {
    values[`f${i}`] = typeof value === "string" ? value : JSON.stringify(value);
  });
  return { query, values };
}

/**
 * A list kept in the order of a number that is its records' creation order (a scope's versions,
 * API_CONTRACT §18: `created_at` order is version order). Its cursor holds that number:
 * `{"v":1,"o":…,"f":…,"n":<number>}`, bound to the order and filter like every cursor.
 */
export type NumberedPageRequest = Omit<PageRequest, "position"> & { after?: number };

export function numberedPageRequest(params: ListParams, filter = ""): NumberedPageRequest {
  const direction = sortDirection(params.sort_by);
  if (params.after === undefined) return { direction, limit: params.limit, filter };
  return {
    direction,
    limit: params.limit,
    filter,
    after: readNumberedCursor(params.after, direction, filter),
  };
}

function numberedCursor(direction: SortDirection, filter: string, n: number): string {
  return toBase64(JSON.stringify({ v: 1, o: direction, f: filter, n }));
}

/** A cursor of a list read by number (`numberedCursor`), whatever its order and filter. */
function isNumberedPayload(value: unknown): value is { v: 1; o: unknown; f: unknown; n: number } {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return p.v === 1 && Number.isSafeInteger(p.n) && (p.n as number) >= 0;
}

/**
 * A cursor of the other kind (a position where a number is read, or the reverse): the same list's
 * other order or filter (an audit log's `after_sequence`), or another list's.
 */
const OTHER_KIND = "Made under another sort order or filter, or for another list.";

function readNumberedCursor(raw: string, direction: SortDirection, filter: string): number {
  const p = cursorPayload(raw);
  if (isCursorPayload(p)) throw invalidCursor(OTHER_KIND);
  if (!isNumberedPayload(p)) throw invalidCursor("Does not decode to a cursor.");
  if (p.o !== direction) throw invalidCursor("Made under another sort order.");
  if (p.f !== filter) throw invalidCursor("Made under another filter.");
  return p.n as number;
}

/** A position in a list read only forward by a sequence number (a deployment's timeline, §19). */
export const encodeSeqCursor = (list: string, seq: number): string => numberedCursor("asc", list, seq);

/** Reads `encodeSeqCursor`'s cursor; one made for another list or order is `400 bad_input`. */
export const decodeSeqCursor = (raw: string, list: string): number => readNumberedCursor(raw, "asc", list);

/** Rows fetched with LIMIT page.limit + 1, in the list's order → the envelope. */
export function toNumberedPage<Row, Item>(
  rows: Row[],
  page: NumberedPageRequest,
  numberOf: (row: Row) => number,
  shape: (row: Row) => Item,
  cut = false,
): Page<Item> {
  return envelopeOf(
    rows,
    page.limit,
    shape,
    (last) => numberedCursor(page.direction, page.filter, numberOf(last)),
    cut,
  );
}
