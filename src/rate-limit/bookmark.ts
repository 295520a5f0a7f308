/**
 * The latest D1 bookmark of one API key's writes, kept in that key's limiter object beside its
 * rate-limit windows (src/rate-limit/limiter.ts), so the one RPC every request already makes
 * also tells it how fresh a replica must be to show the key's own writes.
 *
 * One row at most. A stored bookmark only ever moves forward (two writes of one key finishing
 * in either order leave the later one), and it is kept for BOOKMARK_RETENTION_MS after the last
 * write: long after any replica has caught up with it, and then the object may forget it and,
 * with no window left either, end up with no storage at all. Its table, `d1_bookmark`:
 * ./migrations.ts.
 */
import { isBookmark, laterBookmark } from "../db/session";

export const BOOKMARK_RETENTION_MS = 10 * 60_000;

export function readBookmark(sql: SqlStorage): string | undefined {
  return sql.exec<{ bookmark: string }>("SELECT bookmark FROM d1_bookmark WHERE id = 1").toArray()[0]
    ?.bookmark;
}

/** Keeps the later of the stored bookmark and `bookmark`; returns the one now stored. */
export function storeBookmark(sql: SqlStorage, bookmark: string, now: number): string {
  if (!isBookmark(bookmark)) throw new TypeError("not a D1 bookmark");
  const latest = laterBookmark(readBookmark(sql), bookmark) ?? bookmark;
  sql.exec(
    "INSERT INTO d1_bookmark (id, bookmark, until) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET bookmark = excluded.bookmark, until = excluded.until",
    latest,
    now + BOOKMARK_RETENTION_MS,
  );
  return latest;
}

/** Forgets a bookmark kept past its retention; returns when the kept one expires, or null. */
export function pruneBookmark(sql: SqlStorage, now: number): number | null {
  sql.exec("DELETE FROM d1_bookmark WHERE until <= ?", now);
  return sql.exec<{ until: number | null }>("SELECT max(until) AS until FROM d1_bookmark").one().until;
}
