/**
 * Removing an organization from one database (API_CONTRACT §32), a bounded step at a time
 * (`removeChunk`): the source's rows once a move has switched and settled, the target's copy when a
 * move that has not switched is undone. Each step deletes a bounded number of rows, by key, so a
 * step a crash interrupted is simply run again. Tables and their order: ./tables.ts; the chunk
 * query it shares with the copy: ./copy.ts.
 */
import type { Db } from "../../db/client";
import { chunkQuery } from "./copy";
import { d1, quote } from "./json-rows";
import { MOVED_TABLES, type MovedTable, shapeOf } from "./tables";

/** Rows removed per statement: small transactions, so the database's other work never waits long. */
export const REMOVE_ROWS = 500;

/** Where a removal stands: the table (`step` of MOVED_TABLES, from the last), the project within it. */
export type RemoveCursor = { step: number; projects: string[] | null; project: number };

export const REMOVE_START: RemoveCursor = { step: 0, projects: null, project: 0 };

/**
 * One step of removing the organization from `db`: up to REMOVE_ROWS rows of the table and scope
 * `cursor` names, children before parents (MOVED_TABLES from the last), so no delete cascades far;
 * then its limits and the bookkeeping of its moves, then its own row, unless `keepOrgRow` (the
 * directory's entry of it). Returns the next cursor, or null once nothing is left.
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
    let position = cursor;
    if (spec.scope === "project" && position.projects === null) {
      const { results } = await target
        .prepare("SELECT id FROM projects WHERE org_id = ?")
        .bind(orgId)
        .all<{ id: string }>();
      position = { ...position, projects: results.map((row) => row.id) };
    }
    const scopeId = spec.scope === "org" ? orgId : position.projects?.[position.project];
    const nextScope =
      spec.scope === "project" && position.project + 1 < (position.projects?.length ?? 0)
        ? { ...position, project: position.project + 1 }
        : { step: position.step + 1, projects: position.projects, project: 0 };
    if (scopeId === undefined || name === "organizations") return nextScope;
    const inner = chunkQuery(spec, null, "t.rowid", REMOVE_ROWS);
    const result = await target
      .prepare(`DELETE FROM ${quote(name)} WHERE rowid IN (${inner.text})`)
      .bind(scopeId)
      .run();
    // A full chunk may have more after it (D1's count takes in what its triggers wrote: at worst
    // one more, empty, delete).
    return (result.meta.changes ?? 0) >= REMOVE_ROWS ? position : nextScope;
  }
  const results = await target.batch([
    target.prepare("DELETE FROM org_limits WHERE org_id = ?").bind(orgId),
    target
      .prepare(
        `DELETE FROM move_changes WHERE rowid IN (SELECT rowid FROM move_changes WHERE org_id = ? LIMIT ${REMOVE_ROWS})`,
      )
      .bind(orgId),
  ]);
  if ((results[1]?.meta.changes ?? 0) > 0) return cursor;
  await target.batch([
    ...(keepOrgRow ? [] : [target.prepare("DELETE FROM organizations WHERE id = ?").bind(orgId)]),
    target.prepare("DELETE FROM moving_orgs WHERE org_id = ?").bind(orgId),
  ]);
  return null;
}
