/**
 * When an API key was last used (`api_keys.last_used_at`, a hint on the key's record), kept by
 * the limiter object its requests count in (src/rate-limit/limiter.ts: its family's, API_CONTRACT
 * §28), which every request of the key already calls. The first use after a quiet spell is written by that request (the object says
 * so in its answer), so the next request already shows it; the uses within the following
 * LAST_USED_WRITE_INTERVAL_MS wait in the object, whose alarm writes the latest of them when the
 * interval ends: one write per key per interval, however many isolates and locations serve it.
 *
 * This module is the only writer of `last_used_at` (`writeLastUsed`). The request runs the first
 * write, in its `waitUntil` (`writeFirstUse`), rather than the object: the object answers `admit`
 * in one synchronous step (so concurrent calls can never over-admit), and the write is counted
 * with the request's own D1 work.
 *
 * One row per key of the family used lately: when its last write was made and, while one is
 * pending, the first use it carries (`used_at`) and when it is due (`due_at`). The uses after the
 * first of a pending write are kept in memory only: a restarted object writes the first, a few
 * minutes older at most. A row is kept until its interval has passed, so a key used again within
 * it waits for the interval. Its table, `key_uses`: ./migrations.ts (migration 2; migration 1's
 * `key_use` held the one key of an object before families shared one).
 */
import { and, sql as drizzleSql, eq, isNull, lt, or } from "drizzle-orm";
import type { ServiceContext } from "../context";
import { createDb, type Db } from "../db/client";
import { bindCompiled, prebuilt } from "../db/compiled";
import { d1Of } from "../db/databases";
import { apiKeys } from "../db/schema";
import { PRIMARY } from "../db/session";
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

/** The object's keys' uses, by key id, as stored (with each one's latest use seen). */
export type KeyUses = Map<string, KeyUse>;

type KeyUseRow = {
  key_id: string;
  database: string;
  used_at: number;
  written_at: number | null;
  due_at: number | null;
};

export function readKeyUses(sql: SqlStorage): KeyUses {
  const uses: KeyUses = new Map();
  for (const row of sql.exec<KeyUseRow>("SELECT * FROM key_uses")) {
    uses.set(row.key_id, {
      keyId: row.key_id,
      database: row.database,
      usedAt: row.used_at,
      writtenAt: row.written_at,
      dueAt: row.due_at,
    });
  }
  return uses;
}

function storeKeyUse(sql: SqlStorage, uses: KeyUses, use: KeyUse): void {
  sql.exec(
    `INSERT INTO key_uses (key_id, database, used_at, written_at, due_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (key_id) DO UPDATE SET database = excluded.database, used_at = excluded.used_at,
       written_at = excluded.written_at, due_at = excluded.due_at`,
    use.keyId,
    use.database,
    use.usedAt,
    use.writtenAt,
    use.dueAt,
  );
  uses.set(use.keyId, use);
}

/**
 * One use of the key at `now`. Returns whether the request is to write this use itself (the first
 * after a quiet spell: the object counts it written), and, when this use made a write pending,
 * when that write is due: the caller sets its alarm.
 */
export function recordUse(
  sql: SqlStorage,
  uses: KeyUses,
  keyId: string,
  database: string,
  now: number,
): { writeNow: boolean; dueAt: number | null } {
  const current = uses.get(keyId);
  if (current && current.dueAt !== null) {
    // A write is pending: it will carry this use (memory only, see above), to the database the key
    // is in now. Its organization may have moved since the write became pending (API_CONTRACT
    // §32), and the one it left holds no row to write: the new database is stored at once.
    const next = { ...current, usedAt: Math.max(current.usedAt, now), database };
    if (database === current.database) uses.set(keyId, next);
    else storeKeyUse(sql, uses, next);
    return { writeNow: false, dueAt: null };
  }
  const writtenAt = current?.writtenAt ?? null;
  if (writtenAt === null || now - writtenAt >= LAST_USED_WRITE_INTERVAL_MS) {
    storeKeyUse(sql, uses, { keyId, database, usedAt: now, writtenAt: now, dueAt: null });
    return { writeNow: true, dueAt: null };
  }
  const dueAt = writtenAt + LAST_USED_WRITE_INTERVAL_MS;
  storeKeyUse(sql, uses, { keyId, database, usedAt: now, writtenAt, dueAt });
  return { writeNow: false, dueAt };
}

/**
 * Forgets each row whose interval has passed with nothing pending; returns when the object must
 * look at the rest again (the earliest pending write or end of an interval), or null with no row left.
 */
export function pruneKeyUses(sql: SqlStorage, uses: KeyUses, now: number): number | null {
  const before = now - LAST_USED_WRITE_INTERVAL_MS;
  sql.exec("DELETE FROM key_uses WHERE due_at IS NULL AND (written_at IS NULL OR written_at <= ?)", before);
  let next: number | null = null;
  for (const [keyId, use] of uses) {
    if (use.dueAt === null && (use.writtenAt === null || use.writtenAt <= before)) {
      uses.delete(keyId);
      continue;
    }
    const at = use.dueAt ?? (use.writtenAt ?? now) + LAST_USED_WRITE_INTERVAL_MS;
    next = next === null ? at : Math.min(next, at);
  }
  return next;
}

const lastUsedUpdate = prebuilt("key:last-used", (b) => {
  const at = drizzleSql.placeholder("at");
  return b
    .update(apiKeys)
    .set({ lastUsedAt: drizzleSql`${at}` })
    .where(
      and(
        eq(apiKeys.id, drizzleSql.placeholder("keyId")),
        or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, at)),
      ),
    );
});

/**
 * The one statement that writes `api_keys.last_used_at`: the use at `at` (ms), unless the record
 * already shows a later one (the request's first write and the alarm's later ones may finish in
 * either order).
 */
export function writeLastUsed(db: Db, keyId: string, at: number): Promise<unknown> {
  return bindCompiled(db, lastUsedUpdate(), { keyId, at: toIso(at) }).run();
}

/**
 * The request's part: writes its key's use when the object answered `writeUse` (the first use in
 * a while), kept alive with `ctx.waitUntil`, never awaited, so the answer does not wait for it.
 *
 * In a session of its own, on the primary (where a write runs whatever its session): the write
 * orders nothing the request reads, and the key's lookup session then makes one round trip. A
 * session's second answer is where the runtime compares bookmarks (workerd's D1 binding, with
 * `String.prototype.localeCompare`), and the isolate's first such comparison builds ICU's
 * collator: about 6 ms of a new isolate's first request (bench/README.md).
 */
export function writeFirstUse(ctx: ServiceContext, keyId: string): void {
  ctx.waitUntil(
    writeLastUsed(ctx.openSession(PRIMARY).db, keyId, Date.now()).catch((err) =>
      ctx.log.error("could not record api key use", { error: loggableError(err) }),
    ),
  );
}

/**
 * The alarm's part: writes to D1 each use of `uses` whose write is due at `now`, one key after
 * another. `uses` is the object's own map, read again after each write: a use that arrived while
 * the write was on its way stays pending for the next interval; a failed write is tried again
 * LAST_USED_RETRY_MS later.
 */
export async function writeDueUses(env: Env, sql: SqlStorage, uses: KeyUses, now: number): Promise<void> {
  const due = [...uses.values()].filter((use) => use.dueAt !== null && use.dueAt <= now);
  for (const use of due) {
    const written = use.usedAt;
    let next: KeyUse;
    try {
      await writeLastUsed(createDb(d1Of(env, use.database)), use.keyId, written);
      const current = uses.get(use.keyId) ?? use;
      const done = Date.now();
      next =
        current.usedAt > written
          ? { ...current, writtenAt: done, dueAt: done + LAST_USED_WRITE_INTERVAL_MS }
          : { ...current, writtenAt: done, dueAt: null };
    } catch (err) {
      createLogger({ key_id: use.keyId }).error("could not record api key use; will retry", {
        error: loggableError(err),
      });
      next = { ...(uses.get(use.keyId) ?? use), dueAt: Date.now() + LAST_USED_RETRY_MS };
    }
    storeKeyUse(sql, uses, next);
  }
}
