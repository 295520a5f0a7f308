/**
 * When an API key was last used (`api_keys.last_used_at`, a hint on the key's record), kept by
 * the key's own limiter object (src/rate-limit/limiter.ts), which every request of the key
 * already calls. The first use after a quiet spell is written by that request (the object says
 * so in its answer), so the next request already shows it; the uses within the following
 * LAST_USED_WRITE_INTERVAL_MS wait in the object, whose alarm writes the latest of them when the
 * interval ends: one write per key per interval, however many isolates and locations serve it.
 *
 * This module is the only writer of `last_used_at` (`writeLastUsed`). The request runs the first
 * write, in its `waitUntil` (`writeFirstUse`), rather than the object: the object answers `admit`
 * in one synchronous step (so concurrent calls can never over-admit), and the write is counted
 * with the request's own D1 work.
 *
 * One row at most: when the last write was made and, while one is pending, the first use it
 * carries (`used_at`) and when it is due (`due_at`). The uses after the first of a pending write
 * are kept in memory only: a restarted object writes the first, a few minutes older at most. The
 * row is kept until its interval has passed, so a key used again within it waits for the interval.
 * Its tables, `key_use` and `key_use_database`: ./migrations.ts.
 */
import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { ServiceContext } from "../context";
import { createDb, type Db } from "../db/client";
import { DIRECTORY, d1Of } from "../db/databases";
import { apiKeys } from "../db/schema";
import { loggableError } from "../errors";
import { createLogger } from "../lib/log";
import { toIso } from "../lib/time";

export const LAST_USED_WRITE_INTERVAL_MS = 5 * 60_000;
/** A failed write (D1 unreachable) is tried again this much later. */
export const LAST_USED_RETRY_MS = 30_000;

export type KeyUse = {
  keyId: string;
  /** The binding of the organization database that holds the key. */
  database: string;
  /** The latest use seen (ms); in storage, the first use of a pending write. */
  usedAt: number;
  /** When the last write was made (ms), or null before the first. */
  writtenAt: number | null;
  /** When the pending write is due (ms), or null when none is pending. */
  dueAt: number | null;
};

type KeyUseRow = {
  key_id: string;
  used_at: number;
  written_at: number | null;
  due_at: number | null;
  database: string | null;
};

export function readKeyUse(sql: SqlStorage): KeyUse | null {
  const row = sql
    .exec<KeyUseRow>(
      "SELECT k.*, d.database FROM key_use k LEFT JOIN key_use_database d ON d.id = 1 WHERE k.id = 1",
    )
    .toArray()[0];
  return row
    ? {
        keyId: row.key_id,
        database: row.database ?? DIRECTORY,
        usedAt: row.used_at,
        writtenAt: row.written_at,
        dueAt: row.due_at,
      }
    : null;
}

export function storeKeyUse(sql: SqlStorage, use: KeyUse): void {
  sql.exec(
    `INSERT INTO key_use (id, key_id, used_at, written_at, due_at) VALUES (1, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, used_at = excluded.used_at,
       written_at = excluded.written_at, due_at = excluded.due_at`,
    use.keyId,
    use.usedAt,
    use.writtenAt,
    use.dueAt,
  );
  sql.exec(
    `INSERT INTO key_use_database (id, database) VALUES (1, ?)
     ON CONFLICT (id) DO UPDATE SET database = excluded.database`,
    use.database,
  );
}

/**
 * One use of the key at `now`. Returns the use as it now stands, whether the request is to write
 * this use itself (the first after a quiet spell: the object counts it written), and, when this
 * use made a write pending, when that write is due: the caller sets its alarm.
 */
export function recordUse(
  sql: SqlStorage,
  current: KeyUse | null,
  keyId: string,
  database: string,
  now: number,
): { use: KeyUse; writeNow: boolean; dueAt: number | null } {
  if (current && current.dueAt !== null) {
    // A write is pending: it will carry this use (memory only, see above).
    return { use: { ...current, usedAt: Math.max(current.usedAt, now) }, writeNow: false, dueAt: null };
  }
  const writtenAt = current?.writtenAt ?? null;
  if (writtenAt === null || now - writtenAt >= LAST_USED_WRITE_INTERVAL_MS) {
    const use = { keyId, database, usedAt: now, writtenAt: now, dueAt: null };
    storeKeyUse(sql, use);
    return { use, writeNow: true, dueAt: null };
  }
  const dueAt = writtenAt + LAST_USED_WRITE_INTERVAL_MS;
  const use = { keyId, database, usedAt: now, writtenAt, dueAt };
  storeKeyUse(sql, use);
  return { use, writeNow: false, dueAt };
}

/**
 * Forgets a row whose interval has passed with nothing pending; returns when the object must
 * look at it again (the pending write, or the end of the interval), or null with no row left.
 */
export function pruneKeyUse(sql: SqlStorage, now: number): number | null {
  sql.exec(
    "DELETE FROM key_use WHERE due_at IS NULL AND (written_at IS NULL OR written_at <= ?)",
    now - LAST_USED_WRITE_INTERVAL_MS,
  );
  const use = readKeyUse(sql);
  if (!use) return null;
  return use.dueAt ?? (use.writtenAt ?? now) + LAST_USED_WRITE_INTERVAL_MS;
}

/**
 * The one statement that writes `api_keys.last_used_at`: the use at `at` (ms), unless the record
 * already shows a later one (the request's first write and the alarm's later ones may finish in
 * either order).
 */
export function writeLastUsed(db: Db, keyId: string, at: number): Promise<unknown> {
  const iso = toIso(at);
  return db
    .update(apiKeys)
    .set({ lastUsedAt: iso })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, iso))))
    .run();
}

/**
 * The request's part: writes its key's use when the object answered `writeUse` (the first use in
 * a while), kept alive with `ctx.waitUntil`, never awaited, so the answer does not wait for it.
 */
export function writeFirstUse(ctx: ServiceContext, keyId: string): void {
  ctx.waitUntil(
    writeLastUsed(ctx.db, keyId, Date.now()).catch((err) =>
      ctx.log.error("could not record api key use", { error: loggableError(err) }),
    ),
  );
}

/**
 * The alarm's part: writes `use` to D1 if its write is due at `now`. `latest` reads the object's
 * use again after the write: a use that arrived while the write was on its way stays pending for
 * the next interval; a failed write is tried again LAST_USED_RETRY_MS later. Returns the use as it
 * then stands, stored, or null when nothing was due.
 */
export async function writeDueUse(
  env: Env,
  sql: SqlStorage,
  use: KeyUse | null,
  latest: () => KeyUse | null | undefined,
  now: number,
): Promise<KeyUse | null> {
  if (!use || use.dueAt === null || use.dueAt > now) return null;
  const written = use.usedAt;
  let next: KeyUse;
  try {
    await writeLastUsed(createDb(d1Of(env, use.database)), use.keyId, written);
    const current = latest() ?? use;
    const done = Date.now();
    next =
      current.usedAt > written
        ? { ...current, writtenAt: done, dueAt: done + LAST_USED_WRITE_INTERVAL_MS }
        : { ...current, writtenAt: done, dueAt: null };
  } catch (err) {
    createLogger({ key_id: use.keyId }).error("could not record api key use; will retry", {
      error: loggableError(err),
    });
    next = { ...(latest() ?? use), dueAt: Date.now() + LAST_USED_RETRY_MS };
  }
  storeKeyUse(sql, next);
  return next;
}
