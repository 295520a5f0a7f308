/**
 * A delivery lane's storage (src/delivery-lane.ts): the SQLite table in the object that keeps each
 * delivery still to send, and the statements that take entries into it.
 *
 * The table is created with `CREATE TABLE IF NOT EXISTS`, so an object created before a column was
 * added keeps its old table: `ensureLaneSchema` adds what is missing (`bookmark`, nullable, so its
 * entries read the primary as they did).
 */
import type { LaneEntry } from "./lanes";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS lane (
     delivery_id TEXT PRIMARY KEY,
     series INTEGER NOT NULL,
     manual INTEGER NOT NULL,
     tries INTEGER NOT NULL,
     due_at INTEGER NOT NULL,
     bookmark TEXT,
     database TEXT
   )`,
  "CREATE INDEX IF NOT EXISTS lane_due_at ON lane (due_at)",
];

/** Columns added after the table first shipped, each with the statement that adds it. */
const ADDED_COLUMNS: ReadonlyArray<[name: string, statement: string]> = [
  ["bookmark", "ALTER TABLE lane ADD COLUMN bookmark TEXT"],
  ["database", "ALTER TABLE lane ADD COLUMN database TEXT"],
];

export type LaneRow = {
  delivery_id: string;
  series: number;
  manual: number;
  tries: number;
  due_at: number;
  /** The D1 bookmark the attempt's first read starts from; null: the primary. */
  bookmark: string | null;
  /** The organization database the delivery is in (src/db/databases.ts); null: the directory's. */
  database: string | null;
};

/** An entry as the lane holds it (for tests and diagnostics). */
export type HeldEntry = LaneEntry & { tries: number; dueAt: number };

/** Creates the table, or brings an older object's table up to date. */
export function ensureLaneSchema(sql: SqlStorage): void {
  for (const statement of SCHEMA) sql.exec(statement);
  const columns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(lane)")
      .toArray()
      .map((c) => c.name),
  );
  for (const [name, statement] of ADDED_COLUMNS) if (!columns.has(name)) sql.exec(statement);
}

/**
 * Takes `entries` due at `now`, in the caller's transaction. One already held in the same or a
 * newer series is left as it is; a newer series replaces the older one's entry, its attempts
 * counted afresh. Returns how many were taken.
 */
export function takeEntries(sql: SqlStorage, entries: readonly LaneEntry[], now: number): number {
  let taken = 0;
  for (const entry of entries) {
    const held = sql
      .exec<{ series: number }>("SELECT series FROM lane WHERE delivery_id = ?", entry.deliveryId)
      .toArray()[0];
    if (held && held.series >= entry.series) continue;
    sql.exec(
      `INSERT INTO lane (delivery_id, series, manual, tries, due_at, bookmark, database) VALUES (?, ?, ?, 0, ?, ?, ?)
       ON CONFLICT (delivery_id) DO UPDATE SET series = excluded.series, manual = excluded.manual,
         tries = 0, due_at = excluded.due_at, bookmark = excluded.bookmark, database = excluded.database`,
      entry.deliveryId,
      entry.series,
      entry.manual ? 1 : 0,
      now,
      entry.bookmark ?? null,
      entry.database ?? null,
    );
    taken++;
  }
  return taken;
}

/** What the lane holds, soonest due first. */
export function heldEntries(sql: SqlStorage): HeldEntry[] {
  return sql
    .exec<LaneRow>("SELECT * FROM lane ORDER BY due_at, delivery_id")
    .toArray()
    .map((row) => ({
      deliveryId: row.delivery_id,
      series: row.series,
      manual: row.manual === 1,
      bookmark: row.bookmark,
      database: row.database,
      tries: row.tries,
      dueAt: row.due_at,
    }));
}
