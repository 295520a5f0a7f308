/**
 * A move's reads of an organization's rows a chunk at a time (API_CONTRACT §32; ./copy.ts copies
 * them): each in the order of an index that starts with its scope (./tables.ts), cut where its
 * rows' bytes pass CHUNK_BYTES, so that no read scans a table or brings more than a few megabytes
 * into the isolate. A table of projects' rows is read across all the organization's projects.
 */
import type { Db } from "../../db/client";
import { weightedPage } from "../../db/weighted-page";
import { quote, type Row } from "./json-rows";
import { type MovedTable, shapeOf } from "./tables";

/** Rows read per chunk of one table. */
export const CHUNK_ROWS = 200;
/**
 * The most one chunk reads, in bytes of its rows' values, beyond its first row: a deployment's data
 * or an audit entry's changes can each be a megabyte or two, and 200 of them would not fit in an
 * isolate of 128. Such rows come a few at a time, as the audit log's pages do
 * (src/db/weighted-page.ts).
 */
export const CHUNK_BYTES = 4 * 1024 * 1024;

/** What a read of `spec`'s rows selects from: its table as `t`, joined to its parent `p`. */
export const rowsOf = (spec: MovedTable) => spec.from ?? `${quote(shapeOf(spec.table).name)} t`;

/** The ids of the organization's projects, the organization bound to its one parameter. */
export const ORG_PROJECTS = "SELECT id FROM projects WHERE org_id = ?";

/** The keyset condition and order of a chunk read of one scope (./tables.ts explains `range`). */
export function chunkQuery(spec: MovedTable, after: unknown[] | null, what: string, limit: number) {
  const from = rowsOf(spec);
  const keys = spec.keys.join(", ");
  const params: unknown[] = [];
  let where = `${spec.scopeColumn} = ?`;
  if (after) {
    const ranged = spec.keys.slice(0, spec.range);
    if (spec.range < spec.keys.length) {
      where += ` AND (${ranged.join(", ")}) >= (${ranged.map(() => "?").join(", ")})`;
      params.push(...after.slice(0, spec.range));
    }
    where += ` AND (${keys}) > (${spec.keys.map(() => "?").join(", ")})`;
    params.push(...after);
  }
  return {
    text: `SELECT ${what} FROM ${from} WHERE ${where} ORDER BY ${keys} LIMIT ${limit}`,
    params,
  };
}

/** The order a table's rows are read in: of projects' rows, by project, then by its keys. */
export const readOrder = (spec: MovedTable): readonly string[] =>
  spec.scope === "project" ? [spec.scopeColumn, ...spec.keys] : spec.keys;

/**
 * A chunk read of a table of projects' rows across the organization `orgId`'s projects: the rest of
 * the project `after` is in (after its keys), then the projects whose ids follow it, each through
 * its project index from its first row, in id order. Each part is at most `limit` rows.
 */
export function projectsChunkQuery(
  spec: MovedTable,
  orgId: string,
  after: unknown[] | null,
  what: string,
  limit: number,
) {
  const order = readOrder(spec).join(", ");
  const later = `SELECT ${what} FROM ${rowsOf(spec)} WHERE ${spec.scopeColumn} IN (${ORG_PROJECTS} AND id > ?) ORDER BY ${order} LIMIT ${limit}`;
  if (after === null) return { text: later, params: [orgId, ""] };
  const [project, ...keys] = after;
  const rest = chunkQuery(spec, keys, what, limit);
  return {
    text: `SELECT * FROM (${rest.text}) UNION ALL SELECT * FROM (${later})`,
    params: [project, ...rest.params, orgId, project],
  };
}

/** SQL for the bytes of a row's values: what reading it whole brings into memory, about. */
export const weightOf = (columns: readonly string[]) =>
  columns.map((column) => `coalesce(length(CAST(${quote(column)} AS BLOB)), 0)`).join(" + ");

/**
 * One chunk of `spec`'s rows of the organization `orgId` after `after` (null: from the first), cut
 * where their bytes pass CHUNK_BYTES; `last`, the keys of its last row (`readOrder`), and `more`
 * unless the table has no row after them.
 */
export async function readChunk(
  db: Db,
  spec: MovedTable,
  orgId: string,
  after: unknown[] | null,
): Promise<{ rows: Row[]; last: unknown[] | null; more: boolean }> {
  const { columns } = shapeOf(spec.table);
  const keys = readOrder(spec);
  const what = [
    ...columns.map((column) => `t.${quote(column)}`),
    ...keys.map((key, i) => `${key} AS __k${i}`),
  ].join(", ");
  const limit = spec.chunkRows ?? CHUNK_ROWS;
  let page: { sql: string; params: unknown[] };
  if (spec.scope === "project") {
    const query = projectsChunkQuery(spec, orgId, after, what, limit);
    page = { sql: query.text, params: query.params };
  } else {
    const query = chunkQuery(spec, after, what, limit);
    page = { sql: query.text, params: [orgId, ...query.params] };
  }
  // Cut where the rows' bytes pass CHUNK_BYTES: the rest of the chunk is the next one's.
  const weight = weightOf(columns);
  const order = keys.map((_, i) => `__k${i}`).join(", ");
  const { results } = await weightedPage(db, page, order, weight, CHUNK_BYTES).all<Row>();
  const read = Number(results[0]?.page_rows ?? 0);
  const cut = results.length < read;
  // Of projects' rows after a cursor, the query's first part (the rest of the cursor's project)
  // comes first. When it is full, that project may hold more: the chunk ends with it, and the rows
  // of the projects after it are read again next time, after those.
  const first = spec.scope === "project" && after ? results.filter((r) => r.__k0 === after[0]).length : 0;
  const taken = first === limit ? results.slice(0, first) : results;
  let last: unknown[] | null = null;
  const rows = taken.map((result) => {
    const row: Row = {};
    for (const column of columns) row[column] = result[column];
    last = keys.map((_, i) => result[`__k${i}`]);
    return row;
  });
  return { rows, last, more: cut || first === limit || read - first === limit };
}
