/**
 * The row work of a move (API_CONTRACT §32), on two databases at once: copying an organization's
 * rows a chunk at a time (`copyChunk`) and applying what changed in the source since (`catchUp`).
 * Each step is a few bounded queries and at most one batch of writes per database, idempotent (an
 * upsert, a delete by key), so a step a crash interrupted is simply run again; each reads at most
 * CHUNK_BYTES of rows and one row more (the copy's reads: ./chunk-reads.ts). Tables and their
 * order: ./tables.ts; removing every row of the organization from one database: ./remove.ts.
 * Rows travel as JSON, written by the statements of ./json-rows.ts.
 */
import type { Db } from "../../db/client";
import { CHUNK_BYTES, readChunk, weightOf } from "./chunk-reads";
import { asideStatement, bySize, d1, quote, type Row, upsertStatement } from "./json-rows";
import { MOVED_TABLES, type MovedTable, movedTable, type ParentKey, shapeOf } from "./tables";

/** Changes applied per round of a catch-up. */
export const CHANGES_PER_ROUND = 500;
/**
 * Where a copy stands: the table (`step` of MOVED_TABLES) and the keys of the last row read (of a
 * table of projects' rows: its project's id, then its keys). `projects` and `project` are kept for
 * the progress saved when such tables were read project by project (`copyChunk`).
 */
export type CopyCursor = {
  step: number;
  projects: string[] | null;
  project: number;
  after: unknown[] | null;
};

export const COPY_START: CopyCursor = { step: 0, projects: null, project: 0, after: null };

/**
 * One chunk of the copy: up to CHUNK_ROWS rows of the table `cursor` names (fewer when their bytes
 * pass CHUNK_BYTES), written to `to` (with the copies of the accounts they name). Returns the next
 * cursor (null: all copied) and how many rows were written.
 *
 * A table of projects' rows is read across all of the organization's projects at once, in the
 * order of its project index (`projectsChunkQuery`), not project by project: one step per chunk of
 * rows, however many projects there are. (Project by project, an organization whose writers kept
 * creating projects made a step of every table for each of them, most reading nothing, and its
 * move stayed `copying` as long as they wrote.) A row of a project the target does not hold yet,
 * created in the source after the copy passed the projects, is not written (`with-parents`: its
 * FOREIGN KEY): it was created during the move, so the catch-up brings it, after its project. A
 * cursor saved by a step of the earlier way (`projects` set) has its table read from its start.
 */
export async function copyChunk(
  from: Db,
  to: Db,
  orgId: string,
  cursor: CopyCursor,
): Promise<{ next: CopyCursor | null; copied: number }> {
  const spec = MOVED_TABLES[cursor.step];
  if (!spec) return { next: null, copied: 0 };
  const after = cursor.projects === null ? cursor.after : null;
  const { rows, last, more } = await readChunk(from, spec, orgId, after);
  // Only rows whose parents the target holds: a row of a parent created in the source after the
  // parent's step passed (an event's delivery, a new deployment's stacks and timeline) would fail
  // its FOREIGN KEY; it was created during the move, so the catch-up brings it, after its parent.
  if (rows.length > 0) await writeRows(from, to, [[spec, rows]], [], "with-parents");
  if (more)
    return { next: { step: cursor.step, projects: null, project: 0, after: last }, copied: rows.length };
  const step = cursor.step + 1;
  const next = step < MOVED_TABLES.length ? { step, projects: null, project: 0, after: null } : null;
  return { next, copied: rows.length };
}

/** SQL true for a row whose primary key is one of the JSON array bound (each key an array of its columns). */
const keyIn = (primaryKey: readonly string[]) =>
  `(${primaryKey.map(quote).join(", ")}) IN (SELECT ${primaryKey.map((_, i) => `json_extract(value, '$[${i}]')`).join(", ")} FROM json_each(?))`;

/**
 * Writes `upserts` (each table's rows, parents first) to `to` in one batch, after deleting the
 * rows `deletes` names (children first), with the copies of the accounts the rows name, read from
 * `from`. Upserts overwrite: what the source has now is what the target gets.
 */
async function writeRows(
  from: Db,
  to: Db,
  upserts: readonly (readonly [MovedTable, Row[]])[],
  deletes: readonly (readonly [MovedTable, unknown[][]])[],
  rowsWritten: "all" | "with-parents" = "all",
): Promise<void> {
  const target = d1(to);
  const statements: D1PreparedStatement[] = [];
  for (const [spec, keys] of deletes) {
    const { name, primaryKey } = shapeOf(spec.table);
    for (const group of bySize(keys)) {
      statements.push(
        target.prepare(`DELETE FROM ${quote(name)} WHERE ${keyIn(primaryKey)}`).bind(JSON.stringify(group)),
      );
    }
  }
  const accountIds = new Set<string>();
  for (const [spec, rows] of upserts) {
    for (const column of spec.accounts ?? []) {
      for (const row of rows) if (typeof row[column] === "string") accountIds.add(row[column] as string);
    }
  }
  if (accountIds.size > 0) {
    const { results } = await d1(from)
      .prepare("SELECT * FROM accounts WHERE id IN (SELECT value FROM json_each(?))")
      .bind(JSON.stringify([...accountIds]))
      .all<Row>();
    if (results.length > 0) statements.push(upsertStatement(target, "accounts", ["id"], results));
  }
  for (const [spec, rows] of upserts) {
    const { name, primaryKey, parents } = shapeOf(spec.table);
    const only = rowsWritten === "with-parents" ? movedParents(parents) : [];
    for (const group of bySize(rows)) {
      if (spec.unique) statements.push(asideStatement(target, spec, group));
      statements.push(upsertStatement(target, name, primaryKey, group, only));
    }
  }
  if (statements.length > 0) await target.batch(statements);
}

/** The foreign keys of `parents` whose tables a move carries (accounts are written with the rows). */
const movedParents = (parents: readonly ParentKey[]) =>
  parents.filter((parent) => MOVED_TABLES.some((spec) => shapeOf(spec.table).name === parent.table));

/**
 * One round of catching up: the oldest CHANGES_PER_ROUND changes `from` recorded for the
 * organization (fewer when their rows' values pass CHUNK_BYTES), applied to `to` as the rows stand
 * in `from` now (one that is gone is deleted), then forgotten. Returns how many rows it wrote and
 * whether changes were left.
 */
export async function catchUp(from: Db, to: Db, orgId: string): Promise<{ applied: number; more: boolean }> {
  const source = d1(from);
  const { results: changes } = await source
    .prepare(`SELECT seq, tbl, pk FROM move_changes WHERE org_id = ? ORDER BY seq LIMIT ${CHANGES_PER_ROUND}`)
    .bind(orgId)
    .all<{ seq: number; tbl: string; pk: string }>();
  if (changes.length === 0) return { applied: 0, more: false };
  const round = await withinChunkBytes(source, withinChunkRows(changes));
  const byTable = new Map<string, Map<string, unknown[]>>();
  for (const change of round) {
    const keys = byTable.get(change.tbl) ?? new Map<string, unknown[]>();
    byTable.set(change.tbl, keys);
    keys.set(change.pk, JSON.parse(change.pk) as unknown[]);
  }
  const upserts: [MovedTable, Row[]][] = [];
  const deletes: [MovedTable, unknown[][]][] = [];
  const specs = MOVED_TABLES.filter((spec) => byTable.has(shapeOf(spec.table).name));
  const reads = await source.batch<Row>(
    specs.map((spec) => {
      const { name, columns, primaryKey } = shapeOf(spec.table);
      return source
        .prepare(`SELECT ${columns.map(quote).join(", ")} FROM ${quote(name)} WHERE ${keyIn(primaryKey)}`)
        .bind(JSON.stringify([...(byTable.get(name)?.values() ?? [])]));
    }),
  );
  for (const [i, spec] of specs.entries()) {
    const { name, primaryKey } = shapeOf(spec.table);
    const rows = reads[i]?.results ?? [];
    const present = new Set(rows.map((row) => JSON.stringify(primaryKey.map((column) => row[column]))));
    const gone = [...(byTable.get(name)?.entries() ?? [])]
      .filter(([pk]) => !present.has(pk))
      .map(([, key]) => key);
    if (rows.length > 0) upserts.push([spec, rows]);
    if (gone.length > 0) deletes.push([spec, gone]);
  }
  await writeRows(from, to, upserts, deletes.reverse());
  const last = round[round.length - 1]?.seq ?? 0;
  await source.prepare("DELETE FROM move_changes WHERE org_id = ? AND seq <= ?").bind(orgId, last).run();
  return {
    applied: upserts.reduce((sum, [, rows]) => sum + rows.length, 0),
    more: round.length < changes.length || changes.length === CHANGES_PER_ROUND,
  };
}

/**
 * The first of `changes` (in order) that hold no more rows of a table than its `chunkRows` (rows
 * of a megabyte: a round reads each changed row whole), never fewer than one: the rest wait for
 * the next round, in order, so a round's memory stays a few megabytes whatever was written.
 */
function withinChunkRows<T extends { tbl: string }>(changes: T[]): T[] {
  const counts = new Map<string, number>();
  for (const [i, change] of changes.entries()) {
    const cap = movedTable(change.tbl)?.chunkRows;
    if (cap === undefined) continue;
    const count = (counts.get(change.tbl) ?? 0) + 1;
    if (count > cap && i > 0) return changes.slice(0, i);
    counts.set(change.tbl, count);
  }
  return changes;
}

/**
 * The first of `changes` (in order) whose rows, as they stand in `source`, hold no more than
 * CHUNK_BYTES of values, never fewer than one: a round reads each changed row whole, and 500
 * changed deployments of a megabyte or two would not fit in an isolate. One read of the rows'
 * weights (their keys and a sum, no value) before the round's read of the rows themselves.
 */
async function withinChunkBytes<T extends { tbl: string; pk: string }>(
  source: ReturnType<typeof d1>,
  changes: T[],
): Promise<T[]> {
  const keysByTable = new Map<string, Set<string>>();
  for (const change of changes)
    keysByTable.set(change.tbl, (keysByTable.get(change.tbl) ?? new Set()).add(change.pk));
  const specs = MOVED_TABLES.filter((spec) => keysByTable.has(shapeOf(spec.table).name));
  const reads = await source.batch<Row & { __w: number }>(
    specs.map((spec) => {
      const { name, columns, primaryKey } = shapeOf(spec.table);
      return source
        .prepare(
          `SELECT ${primaryKey.map(quote).join(", ")}, ${weightOf(columns)} AS __w FROM ${quote(name)} WHERE ${keyIn(primaryKey)}`,
        )
        .bind(JSON.stringify([...(keysByTable.get(name) ?? [])].map((pk) => JSON.parse(pk))));
    }),
  );
  const weights = new Map<string, number>();
  for (const [i, spec] of specs.entries()) {
    const { name, primaryKey } = shapeOf(spec.table);
    for (const row of reads[i]?.results ?? [])
      weights.set(`${name} ${JSON.stringify(primaryKey.map((column) => row[column]))}`, Number(row.__w));
  }
  let bytes = 0;
  const counted = new Set<string>();
  for (const [i, change] of changes.entries()) {
    const key = `${change.tbl} ${change.pk}`;
    if (counted.has(key)) continue;
    counted.add(key);
    bytes += weights.get(key) ?? 0;
    if (bytes > CHUNK_BYTES && i > 0) return changes.slice(0, i);
  }
  return changes;
}

export { movedTable };
