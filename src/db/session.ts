/**
 * D1 read replication through the Sessions API: every D1 access of the Worker goes through a
 * session opened here (`openSession`), never through the bare binding.
 *
 * A session starts from one of three points (`SessionStart`):
 * - `first-unconstrained`: its first query may run on any copy (the nearest replica), then
 *   every later query on a copy at least as fresh as what it has seen (sequential consistency);
 * - `first-primary`: its first query runs on the primary (the freshest state there is);
 * - a bookmark: its first query runs on a copy at least as fresh as that bookmark, which is how
 *   a caller reads its own earlier writes from a replica (`withSession(bookmark)`).
 *
 * Writes always execute on the primary, whatever the start. Bookmarks are strings such as
 * `0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b` that "are lexicographically
 * sortable. Sorting orders a list of bookmarks from oldest-to-newest" (Cloudflare docs, D1 >
 * Reference > Glossary, https://developers.cloudflare.com/d1/reference/glossary/; the same
 * shape and rule for Durable Object SQLite bookmarks in the Durable Objects glossary), so the
 * later of two bookmarks is the greater string (`laterBookmark`); the local runtime keeps a
 * session's bookmark by the same comparison.
 */
import { createDb, type Db } from "./client";

export type SessionStart =
  | { mode: "first-unconstrained" }
  | { mode: "first-primary" }
  | { mode: "bookmark"; bookmark: string };

/** One D1 session: the Drizzle handle over it, where it started, and its latest bookmark. */
export type DbSession = {
  db: Db;
  start: SessionStart;
  /** The latest bookmark the session has seen (or started from); null before any query. */
  bookmark(): string | null;
};

export const UNCONSTRAINED: SessionStart = { mode: "first-unconstrained" };
export const PRIMARY: SessionStart = { mode: "first-primary" };

export function openSession(d1: Pick<D1Database, "withSession">, start: SessionStart): DbSession {
  const from = start.mode === "bookmark" ? start.bookmark : start.mode;
  // Opened at the first query, so a request that never reaches D1 opens no session at all.
  let session: D1DatabaseSession | undefined;
  const open = () => {
    session ??= d1.withSession(from);
    return session;
  };
  const client = {
    prepare: (query: string) => open().prepare(query),
    batch: <T = unknown>(statements: D1PreparedStatement[]) => open().batch<T>(statements),
  };
  return {
    db: createDb(client),
    start,
    bookmark: () => laterBookmark(session?.getBookmark(), start.mode === "bookmark" ? start.bookmark : null),
  };
}

/**
 * Where a session of background work (a queue message, a lane's attempt) starts: from the
 * bookmark of the write that made what it reads, when it has one (a replica at least that fresh
 * sees it), else on the primary. Its writes go to the primary either way.
 */
export function startAfter(bookmark: string | null | undefined): SessionStart {
  return bookmark && isBookmark(bookmark) ? { mode: "bookmark", bookmark } : PRIMARY;
}

/** The request and response header that carries a D1 bookmark. */
export const D1_BOOKMARK_HEADER = "X-D1-Bookmark";

const BARE_BOOKMARK = "[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}";
/**
 * The shape of a D1 bookmark: four dash-separated hexadecimal fields of 8, 8, 8 and 32 digits
 * (the examples of both glossaries, and what the local runtime issues).
 */
const BOOKMARK_PATTERN = new RegExp(`^${BARE_BOOKMARK}$`);
/** The MAC the service appends to a bookmark it hands out (src/crypto/bookmarks.ts): base64url of 32 bytes. */
const BOOKMARK_MAC = "[A-Za-z0-9_-]{43}";

/**
 * The `X-D1-Bookmark` header as the service hands it out: the binding of the database the bookmark
 * is of (src/db/databases.ts; a bookmark orders the writes of one database only), a colon, the
 * bookmark, a dot and its MAC (src/crypto/bookmarks.ts). A request's value may lack the database
 * or the MAC (a bare bookmark, as answers carried before): it is well-formed, but cannot be
 * verified, so it is ignored. Anything else is refused before it reaches D1.
 */
export const D1_BOOKMARK_PATTERN_SOURCE = `^([A-Z][A-Z0-9_]{0,62}:)?${BARE_BOOKMARK}(\\.${BOOKMARK_MAC})?$`;
/** The header as the service sends it: always with its database and its MAC. */
export const D1_BOOKMARK_SENT_PATTERN_SOURCE = `^[A-Z][A-Z0-9_]{0,62}:${BARE_BOOKMARK}\\.${BOOKMARK_MAC}$`;
const HEADER_PATTERN = new RegExp(D1_BOOKMARK_PATTERN_SOURCE);

export function isBookmark(value: string): boolean {
  return BOOKMARK_PATTERN.test(value);
}

/** A well-formed header's parts: what it names (null: nothing), the bookmark, its MAC (null: none). */
export type BookmarkHeaderParts = { database: string | null; bookmark: string; mac: string | null };

/** The parts of a header's value; undefined when the value is no bookmark at all. */
export function parseBookmarkHeader(value: string): BookmarkHeaderParts | undefined {
  if (!HEADER_PATTERN.test(value)) return undefined;
  const colon = value.indexOf(":");
  const dot = value.indexOf(".");
  return {
    database: colon < 0 ? null : value.slice(0, colon),
    bookmark: value.slice(colon + 1, dot < 0 ? undefined : dot),
    mac: dot < 0 ? null : value.slice(dot + 1),
  };
}

/** The later (lexicographically greater) of two bookmarks; null only when both are. */
export function laterBookmark(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return a >= b ? a : b;
}

/** Whether a request may write: GET and HEAD never do (every route keeps them read-only). */
export const mayWrite = (method: string) => method !== "GET" && method !== "HEAD";

/**
 * Where a request's session starts.
 *
 * The method decides whether the request writes (`mayWrite`). A request that may write starts
 * on the primary: its own reads (the compare-and-set reads before an update, the parent checks
 * before an insert) must see the latest state, not a replica's, or a conflict check could pass
 * on stale data; and a primary start is already at least as fresh as any bookmark.
 *
 * A read starts from the latest bookmark it knows of (the caller's key's last write, or the
 * one the caller sent), so it sees those writes; with none, it runs on the nearest replica.
 */
export function sessionStart(method: string, ...known: (string | null | undefined)[]): SessionStart {
  if (mayWrite(method)) return PRIMARY;
  let latest: string | null = null;
  for (const bookmark of known) latest = laterBookmark(latest, bookmark);
  return latest ? { mode: "bookmark", bookmark: latest } : UNCONSTRAINED;
}
