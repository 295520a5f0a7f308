/**
 * A delivery lane's storage (./object.ts): the SQLite table in the object that keeps each delivery
 * still to send (created by ./migrations.ts), and every statement the object runs on it. An entry
 * is named by its delivery and series: a statement about an entry whose series was replaced
 * meanwhile (a redeliver handed over a newer one) changes nothing.
 */
import type { HeldEntry, LaneEntry } from "../services/integrations/lane-protocol";

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

type EntryKey = Pick<LaneRow, "delivery_id" | "series">;

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

/** When the soonest entry falls due, or null when the lane holds none. */
export function soonestDue(sql: SqlStorage): number | null {
  return sql.exec<{ at: number | null }>("SELECT min(due_at) AS at FROM lane").one().at;
}

/** Up to `room` entries due at `now` that are not already in flight, soonest first. */
export function dueEntries(
  sql: SqlStorage,
  room: number,
  inFlight: ReadonlyMap<string, unknown>,
  now: number,
) {
  if (room <= 0) return [];
  return sql
    .exec<LaneRow>("SELECT * FROM lane WHERE due_at <= ? ORDER BY due_at LIMIT ?", now, room + inFlight.size)
    .toArray()
    .filter((row) => !inFlight.has(row.delivery_id))
    .slice(0, room);
}

/** When the soonest entry not in flight falls due, or null when there is none. */
export function nextDueBesides(sql: SqlStorage, inFlight: ReadonlyMap<string, unknown>): number | null {
  const rows = sql.exec<LaneRow>("SELECT * FROM lane ORDER BY due_at LIMIT ?", inFlight.size + 1).toArray();
  return rows.find((row) => !inFlight.has(row.delivery_id))?.due_at ?? null;
}

/** The entry is done with: its outcome is recorded (or its dead letter handed over). */
export function dropEntry(sql: SqlStorage, row: EntryKey): void {
  sql.exec("DELETE FROM lane WHERE delivery_id = ? AND series = ?", row.delivery_id, row.series);
}

/** The entry's step failed: due again at `at`, its tries unchanged. */
export function deferEntry(sql: SqlStorage, row: EntryKey, at: number): void {
  sql.exec(
    "UPDATE lane SET due_at = ? WHERE delivery_id = ? AND series = ?",
    at,
    row.delivery_id,
    row.series,
  );
}

/** The entry's organization is in `database` now: due there at `at`, read from its primary. */
export function rehomeEntry(sql: SqlStorage, row: EntryKey, database: string, at: number): void {
  sql.exec(
    "UPDATE lane SET database = ?, bookmark = NULL, due_at = ? WHERE delivery_id = ? AND series = ?",
    database,
    at,
    row.delivery_id,
    row.series,
  );
}

/** A failed attempt counted: due again at `at`, its first read then starting from `bookmark`. */
export function retryEntry(sql: SqlStorage, row: EntryKey, at: number, bookmark: string | null): void {
  sql.exec(
    "UPDATE lane SET tries = tries + 1, due_at = ?, bookmark = ? WHERE delivery_id = ? AND series = ?",
    at,
    bookmark,
    row.delivery_id,
    row.series,
  );
}

/** The entry's tries are spent (`tries`): what is left is its dead letter. */
export function spendEntry(sql: SqlStorage, row: EntryKey, tries: number): void {
  sql.exec(
    "UPDATE lane SET tries = ? WHERE delivery_id = ? AND series = ?",
    tries,
    row.delivery_id,
    row.series,
  );
}
