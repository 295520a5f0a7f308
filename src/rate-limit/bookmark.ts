/**
 * The latest D1 bookmark of one API key's writes, kept in that key's limiter object beside its
 * rate-limit windows (src/rate-limit/limiter.ts), so the one RPC every request already makes
 * also tells it how fresh a replica must be to show the key's own writes.
 *
 * One row at most: `<database>:<bookmark>`, the binding of the organization database the write
 * was made in (src/db/databases.ts) and the bookmark, since a bookmark orders the writes of one
 * database only and an organization may move to another (API_CONTRACT §32); a bare bookmark, stored
 * before the database was named, is of the key's own database. A stored bookmark only ever moves
 * forward within its database (two writes of one key finishing in either order leave the later
 * one); one of another database replaces it (the organization has moved). It is kept for
 * BOOKMARK_RETENTION_MS after the last write: long after any replica has caught up with it, and then the object may forget it and,
 * with no window left either, end up with no storage at all. Its table, `d1_bookmark`:
 * ./migrations.ts.
 */
import { isBookmark, laterBookmark } from "../db/session";

export const BOOKMARK_RETENTION_MS = 10 * 60_000;

export function readBookmark(sql: SqlStorage): string | undefined {
  return sql.exec<{ bookmark: string }>("SELECT bookmark FROM d1_bookmark WHERE id = 1").toArray()[0]
    ?.bookmark;
}

/** A stored bookmark's parts (`database` null: a bare one), or undefined when it is none. */
export function keyBookmarkParts(value: string): { database: string | null; bookmark: string } | undefined {
  const colon = value.indexOf(":");
  const database = colon < 0 ? null : value.slice(0, colon);
  const bookmark = value.slice(colon + 1);
  if (!isBookmark(bookmark) || (database !== null && !/^[A-Z][A-Z0-9_]{0,62}$/.test(database)))
    return undefined;
  return { database, bookmark };
}

/**
 * What a stored bookmark says about `database`: its bookmark when it is of that database (or bare),
 * else null.
 */
export function keyBookmarkIn(value: string | undefined, database: string): string | null {
  const parts = value === undefined ? undefined : keyBookmarkParts(value);
  return parts && (parts.database === null || parts.database === database) ? parts.bookmark : null;
}

/** Keeps the later of the stored bookmark and `bookmark` (see above); returns the one now stored. */
export function storeBookmark(sql: SqlStorage, bookmark: string, now: number): string {
  const next = keyBookmarkParts(bookmark);
  if (!next) throw new TypeError("not a D1 bookmark");
  const stored = readBookmark(sql);
  const kept = stored === undefined ? undefined : keyBookmarkParts(stored);
  // A bare one (stored before bookmarks named their database) is of the key's own database.
  const sameDatabase =
    kept && (kept.database === null || next.database === null || kept.database === next.database);
  const latest =
    kept && sameDatabase && laterBookmark(kept.bookmark, next.bookmark) === kept.bookmark
      ? (stored as string)
      : bookmark;
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
