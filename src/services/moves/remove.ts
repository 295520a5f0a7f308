/**
 * Removing an organization from one database (API_CONTRACT §32), a bounded step at a time
 * (`removeChunk`): the source's rows once a move has switched and settled, the target's copy when a
 * move that has not switched is undone. Each step deletes a bounded number of rows, through the
 * index on the table's scope, so a step a crash interrupted is simply run again. Tables and their
 * order: ./tables.ts.
 *
 * A switched move's source stays fenced while its rows go (`unfenced`): a write that an isolate
 * still sends there (its lookup of where the organization is older than the switch) is refused,
 * `408`, and its retry finds the target, rather than taken and then removed, or taken after its
 * table was; and the lists across the databases leave the leftovers out (src/db/moving.ts).
 */
import type { Db } from "../../db/client";
import { ORG_PROJECTS, rowsOf } from "./chunk-reads";
import { d1, quote } from "./json-rows";
import { MOVED_TABLES, type MovedTable, shapeOf } from "./tables";

/** Rows removed per statement: small transactions, so the database's other work never waits long. */
export const REMOVE_ROWS = 500;

/**
 * `statements` in one transaction with the organization's fence lifted for them alone, where a
 * switched move left it fenced here (else as they are): no other write can come between, so none
 * meets the fence down. Lifted as `incoming` (a row of a copy being made), so the capture triggers
 * record nothing of what is removed; the batch's results are the statements' own.
 */
async function unfenced(target: ReturnType<typeof d1>, orgId: string, statements: D1PreparedStatement[]) {
  const fence = (set: string, where: string) =>
    target
      .prepare(`UPDATE moving_orgs SET ${set} WHERE org_id = ? AND switched = 1 AND ${where}`)
      .bind(orgId);
  const results = await target.batch([
    fence("fenced = 0, incoming = 1", "fenced = 1 AND incoming = 0"),
    ...statements,
    fence("fenced = 1, incoming = 0", "fenced = 0 AND incoming = 1"),
  ]);
  return results.slice(1, -1);
}

/**
 * Where a removal stands: the table (`step` of MOVED_TABLES, from the last). `projects` and
 * `project` are kept for the progress saved before tables were taken whole (`removeChunk`).
 */
export type RemoveCursor = { step: number; projects: string[] | null; project: number };

export const REMOVE_START: RemoveCursor = { step: 0, projects: null, project: 0 };

/** The DELETE of up to REMOVE_ROWS rows of `spec`'s table of the organization its one parameter names. */
export function removalStatement(spec: MovedTable): string {
  const { name } = shapeOf(spec.table);
  const scope = spec.scope === "org" ? `${spec.scopeColumn} = ?` : `${spec.scopeColumn} IN (${ORG_PROJECTS})`;
  return `DELETE FROM ${quote(name)} WHERE rowid IN (SELECT t.rowid FROM ${rowsOf(spec)} WHERE ${scope} LIMIT ${REMOVE_ROWS})`;
}

/**
 * One step of removing the organization from `db`: up to REMOVE_ROWS rows of the table `cursor`
 * names, children before parents (MOVED_TABLES from the last), so no delete cascades far; then its
 * limits and the bookkeeping of its moves, then its own row, unless `keepOrgRow` (the directory's
 * entry of it). Returns the next cursor, or null once nothing is left.
 *
 * A table of projects' rows is taken across all of the organization's projects at once (each
 * project's rows through the index on its project: `scopeColumn IN` them), not project by project:
 * one step per REMOVE_ROWS rows, and one for a table with none, however many projects there are.
 * (Project by project, a hundred projects made thousands of steps that deleted nothing, and a
 * cancel that waited for them all took tens of seconds.) `projects` and `project` of a cursor a
 * step of that earlier way saved are ignored: the table it names is taken from its start.
 */
export async function removeChunk(
  db: Db,
  orgId: string,
  keepOrgRow: boolean,
  cursor: RemoveCursor,
): Promise<RemoveCursor | null> {
  const target = d1(db);
  const tables = MOVED_TABLES.length;
  if (cursor.step < tables) {
    const spec = MOVED_TABLES[tables - 1 - cursor.step] as MovedTable;
    const { name } = shapeOf(spec.table);
    const next = { step: cursor.step + 1, projects: null, project: 0 };
    if (name === "organizations") return next;
    const [result] = await unfenced(target, orgId, [target.prepare(removalStatement(spec)).bind(orgId)]);
    // A full chunk may have more after it (D1's count takes in what its triggers wrote: at worst
    // one more, empty, delete).
    return (result?.meta.changes ?? 0) >= REMOVE_ROWS ? cursor : next;
  }
  const results = await unfenced(target, orgId, [
    target.prepare("DELETE FROM org_limits WHERE org_id = ?").bind(orgId),
    target
      .prepare(
        `DELETE FROM move_changes WHERE rowid IN (SELECT rowid FROM move_changes WHERE org_id = ? LIMIT ${REMOVE_ROWS})`,
      )
      .bind(orgId),
  ]);
  if ((results[1]?.meta.changes ?? 0) > 0) return cursor;
  // The fence goes first, in the same transaction: the organization's own row is fenced like any other.
  await target.batch([
    target.prepare("DELETE FROM moving_orgs WHERE org_id = ?").bind(orgId),
    ...(keepOrgRow ? [] : [target.prepare("DELETE FROM organizations WHERE id = ?").bind(orgId)]),
  ]);
  return null;
}
