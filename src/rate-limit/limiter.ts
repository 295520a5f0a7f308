import { DurableObject } from "cloudflare:workers";
import { and, eq, isNull, lt, or } from "drizzle-orm";
import { createDb } from "../db/client";
import { d1Of } from "../db/databases";
import { apiKeys } from "../db/schema";
import { loggableError } from "../errors";
import {
  type ClaimOutcome,
  claimKey,
  countKeys,
  expireKeys,
  IDEMPOTENCY_SCHEMA,
  type IdempotencyClaim,
  type Settlement,
  settleKey,
} from "../idempotency/store";
import { createLogger } from "../lib/log";
import { toIso } from "../lib/time";
import { BOOKMARK_SCHEMA, pruneBookmark, readBookmark, storeBookmark } from "./bookmark";
import {
  KEY_USE_SCHEMA,
  type KeyUse,
  LAST_USED_RETRY_MS,
  LAST_USED_WRITE_INTERVAL_MS,
  pruneKeyUse,
  readKeyUse,
  recordUse,
  storeKeyUse,
} from "./key-use";
import { decideCounted, type WindowDecision } from "./window";

/**
 * What a request asks of its limiter object in `admit`: one call per authenticated request.
 * Each feature adds its own optional field here and in `AdmitResult`, so the request still
 * costs one call whatever it carries.
 */
export type AdmitRequest = {
  /** The rate-limit policy the request counts against, its limit and window. */
  policy: string;
  limit: number;
  windowSeconds: number;
  /** API_CONTRACT §11: claim this Idempotency-Key, only if the request is admitted. */
  idempotency?: IdempotencyClaim;
  /** The API key this request authenticated with, and its database: its `last_used_at` (./key-use.ts). */
  usedKey?: { id: string; database: string };
};

/** What `admit` answers: each feature adds its own field. */
export type AdmitResult = {
  decision: WindowDecision;
  /** The latest D1 bookmark of this key's writes (src/rate-limit/bookmark.ts), if one is kept. */
  bookmark?: string;
  /** Present when the request asked for a claim and was admitted. */
  idempotency?: ClaimOutcome;
  /** The request is to write its key's `last_used_at` itself (./key-use.ts). */
  writeUse?: true;
};

/** Settles a claimed key: stores the answer, releases the key (`null`) or lets it lapse. */
export type SettleRequest = { idempotency: IdempotencyClaim; answer: Settlement };

// `until` (= at + the policy's window) lets the clean-up alarm work without knowing policies.
const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)",
  "CREATE INDEX IF NOT EXISTS window_hits_policy_at ON window_hits (policy, at)",
  ...BOOKMARK_SCHEMA,
  ...IDEMPOTENCY_SCHEMA,
  ...KEY_USE_SCHEMA,
];

/**
 * One object per API key (`key:<key id>`), and one per client IP for failed authentications
 * (`ip:<ip>`): no object or counter is shared by all traffic, so the limiter's load spreads over
 * the active keys and grows with them (docs/capacity.md). An object is created near the Worker
 * that first calls it, which is where its key is used; no location hint could do better.
 *
 * The object answers each request in one synchronous step (SQL on its own storage never awaits),
 * so concurrent calls are serialized and can never over-admit:
 * - an exact sliding window per policy (./window.ts), its rows kept in memory as stored, so
 *   deciding costs no read and an admitted request is one INSERT;
 * - the latest D1 bookmark of the key's writes (./bookmark.ts), handed back with the decision so
 *   that a read starts its D1 session from it at no extra call;
 * - the request's Idempotency-Key claim (src/idempotency/store.ts), made in the same step as the
 *   decision, so "exactly one execution" is a property of this one call;
 * - when the key was last used (./key-use.ts): one write to D1 per key every few minutes, by the
 *   first request after a quiet spell or by the alarm.
 *
 * Storage stays bounded: `admit` prunes its policy's entries that left the window, and an alarm
 * (one window after the newest entry, the bookmark's retention, or the oldest idempotency entry's
 * expiry) deletes what is left, so the object of a key gone quiet ends with no storage at all.
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private schemaReady = false;
  /** When the pending clean-up alarm fires (ms), or null when none is set. */
  private alarmAt: number | null = null;
  /**
   * Each policy's admitted times (ms, ascending), exactly the rows of `window_hits`: read once
   * per policy and object lifetime (`windowOf`), then kept in step with every write, so a
   * request costs one INSERT and no read (and a DELETE when entries leave the window). Holds
   * what the table holds, at most `limit` times per policy.
   */
  private readonly windows = new Map<string, number[]>();
  /** The kept D1 bookmark as stored (null: none); undefined until first read. */
  private bookmark: string | null | undefined;
  /** The key's use as stored, with the latest use seen (null: none); undefined until first read. */
  private use: KeyUse | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * Counts one request against its policy and hands back the key's latest write bookmark; when
   * admitted, also claims its Idempotency-Key: one call, one step.
   */
  admit(request: AdmitRequest): AdmitResult {
    const decision = this.hit(request.policy, request.limit, request.windowSeconds);
    const result: AdmitResult = { decision };
    if (request.usedKey !== undefined && this.recordUse(request.usedKey.id, request.usedKey.database)) {
      result.writeUse = true;
    }
    if (this.bookmark === undefined) this.bookmark = readBookmark(this.sql) ?? null;
    if (this.bookmark !== null) result.bookmark = this.bookmark;
    if (!request.idempotency || !decision.allowed) return result;
    const { expiresAt, ...claim } = claimKey(this.sql, request.idempotency, Date.now());
    if (expiresAt !== undefined && (this.alarmAt === null || this.alarmAt > expiresAt)) {
      this.scheduleCleanup(expiresAt);
    }
    result.idempotency = claim;
    return result;
  }

  /** The second call of a request that claimed a key: stores its answer or releases the key. */
  settle(request: SettleRequest): void {
    this.ensureSchema();
    // One transaction: an entry is `done` only with all of its answer's parts.
    this.ctx.storage.transactionSync(() => settleKey(this.sql, request.idempotency, request.answer));
  }

  /**
   * Keeps `bookmark` (a D1 bookmark taken after one of the key's writes) if it is later than
   * the stored one; returns the one now stored, the latest of the key's writes.
   */
  recordBookmark(bookmark: string): string {
    this.ensureSchema();
    const now = Date.now();
    const latest = storeBookmark(this.sql, bookmark, now);
    this.bookmark = latest;
    if (this.alarmAt === null) this.scheduleCleanup(pruneBookmark(this.sql, now) ?? now);
    return latest;
  }

  /** The sliding window alone (synchronous, so its tests can drive it directly). */
  hit(policy: string, limit: number, windowSeconds: number): WindowDecision {
    this.ensureSchema();
    const windowMs = windowSeconds * 1000;
    const window = this.windowOf(policy);
    // The clock of a restarted or moved object may be slightly behind the newest entry;
    // time never runs backwards for a window, or its reset could exceed the window.
    const now = Math.max(Date.now(), window.at(-1) ?? 0);
    const pruneThrough = now - windowMs;
    // Ascending, so the entries that left the window are a prefix of it.
    const kept = window.findIndex((at) => at > pruneThrough);
    const left = kept === -1 ? window.length : kept;
    if (left > 0) {
      this.sql.exec("DELETE FROM window_hits WHERE policy = ? AND at <= ?", policy, pruneThrough);
      window.splice(0, left);
    }
    const decision = decideCounted({ count: window.length, oldest: window[0] ?? null }, now, limit, windowMs);
    if (decision.allowed) {
      this.sql.exec(
        "INSERT INTO window_hits (policy, at, until) VALUES (?, ?, ?)",
        policy,
        now,
        now + windowMs,
      );
      window.push(now);
      // Earlier than a pending alarm set for an idempotency entry's expiry, too.
      if (this.alarmAt === null || this.alarmAt > now + windowMs) this.scheduleCleanup(now + windowMs);
    }
    return decision;
  }

  /** Records a use of the key; true when the request is to write it (the first in a while). */
  private recordUse(keyId: string, database: string): boolean {
    if (this.use === undefined) this.use = readKeyUse(this.sql);
    const { use, writeNow, dueAt } = recordUse(this.sql, this.use, keyId, database, Date.now());
    this.use = use;
    // A written use's row is pruned by the window's alarm, which every admitted request sets.
    if (dueAt !== null && (this.alarmAt === null || this.alarmAt > dueAt)) this.scheduleCleanup(dueAt);
    return writeNow;
  }

  /**
   * Writes the key's latest use to D1 when its write is due. A use that arrives while the write
   * is on its way stays pending for the next interval; a failed write is tried again shortly.
   */
  private async writeUse(now: number): Promise<void> {
    const use = this.use ?? readKeyUse(this.sql);
    this.use = use;
    if (!use || use.dueAt === null || use.dueAt > now) return;
    const written = use.usedAt;
    const at = toIso(written);
    try {
      await createDb(d1Of(this.env, use.database))
        .update(apiKeys)
        .set({ lastUsedAt: at })
        .where(and(eq(apiKeys.id, use.keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, at))))
        .run();
    } catch (err) {
      createLogger({ key_id: use.keyId }).error("could not record api key use; will retry", {
        error: loggableError(err),
      });
      this.use = { ...(this.use ?? use), dueAt: Date.now() + LAST_USED_RETRY_MS };
      storeKeyUse(this.sql, this.use);
      return;
    }
    const latest = this.use ?? use;
    const done = Date.now();
    this.use =
      latest.usedAt > written
        ? { ...latest, writtenAt: done, dueAt: done + LAST_USED_WRITE_INTERVAL_MS }
        : { ...latest, writtenAt: done, dueAt: null };
    storeKeyUse(this.sql, this.use);
  }

  /** A policy's stored window, read from SQLite on its first use in this object's lifetime. */
  private windowOf(policy: string): number[] {
    let window = this.windows.get(policy);
    if (!window) {
      window = [];
      for (const [at] of this.sql
        .exec("SELECT at FROM window_hits WHERE policy = ? ORDER BY at", policy)
        .raw()) {
        window.push(at as number);
      }
      this.windows.set(policy, window);
    }
    return window;
  }

  /**
   * Writes the key's last use when due; deletes every window entry that left its window and every
   * expired idempotency entry; with nothing left, all of the object's storage. Next run: when the
   * window is empty again, when the oldest idempotency entry expires, or when the key's use is
   * due, whichever comes first.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.ensureSchema();
    await this.writeUse(Date.now());
    // What follows deletes rows of every policy and the bookmark: read them again when next used.
    this.forgetCachedState();
    const now = Date.now();
    const useNext = pruneKeyUse(this.sql, now);
    // The use is kept in memory with its latest time; forgotten only with its row.
    if (useNext === null) this.use = null;
    this.sql.exec("DELETE FROM window_hits WHERE until <= ?", now);
    const last = this.sql.exec<{ until: number | null }>("SELECT max(until) AS until FROM window_hits").one();
    const bookmarkUntil = pruneBookmark(this.sql, now);
    const nextExpiry = expireKeys(this.sql, now);
    // The window and the bookmark: when the last of them ends; idempotency entries: when the
    // first expires (each alarm run deletes those due and schedules the next).
    const windowOrBookmark = Math.max(last.until ?? 0, bookmarkUntil ?? 0);
    const next = [windowOrBookmark === 0 ? null : windowOrBookmark, nextExpiry, useNext].filter(
      (at): at is number => at !== null,
    );
    if (next.length === 0) {
      await this.ctx.storage.deleteAll();
      this.schemaReady = false;
      this.forgetCachedState();
      this.use = undefined;
      return;
    }
    this.scheduleCleanup(Math.min(...next));
  }

  /** Admitted requests currently stored for each policy (for tests and diagnostics). */
  usage(): Record<string, number> {
    this.ensureSchema();
    const rows = this.sql
      .exec<{ policy: string; n: number }>("SELECT policy, count(*) AS n FROM window_hits GROUP BY policy")
      .toArray();
    return Object.fromEntries(rows.map((r) => [r.policy, r.n]));
  }

  /** Idempotency entries currently stored (for tests and diagnostics). */
  idempotencyEntries(): number {
    this.ensureSchema();
    return countKeys(this.sql);
  }

  private scheduleCleanup(at: number) {
    this.alarmAt = at;
    // Not awaited: like the SQL writes, the alarm write commits before the reply leaves.
    void this.ctx.storage.setAlarm(at);
  }

  private forgetCachedState() {
    this.windows.clear();
    this.bookmark = undefined;
  }

  private ensureSchema() {
    if (this.schemaReady) return;
    for (const statement of SCHEMA) this.sql.exec(statement);
    this.schemaReady = true;
  }
}
