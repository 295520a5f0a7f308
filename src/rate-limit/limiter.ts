import { DurableObject } from "cloudflare:workers";
import { BOOKMARK_SCHEMA, pruneBookmark, readBookmark, storeBookmark } from "./bookmark";
import { decide, type WindowDecision } from "./window";

// `until` (= at + the policy's window) lets the clean-up alarm work without knowing policies.
const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)",
  "CREATE INDEX IF NOT EXISTS window_hits_policy_at ON window_hits (policy, at)",
  ...BOOKMARK_SCHEMA,
];

/** What a request asks of its limiter object in `admit`: each feature adds its own field. */
export type AdmitRequest = {
  /** The rate-limit policy the request counts against, its limit and window. */
  policy: string;
  limit: number;
  windowSeconds: number;
};

/** What `admit` answers: each feature adds its own field. */
export type AdmitResult = {
  decision: WindowDecision;
  /** The latest D1 bookmark of this key's writes (src/rate-limit/bookmark.ts), if one is kept. */
  bookmark?: string;
};

/**
 * One object per API key (or per client IP for anonymous traffic), one exact sliding
 * window per policy. Admitted requests are rows in the object's SQLite storage.
 *
 * `hit` runs entirely synchronously (SQL on the object's storage is synchronous, and it
 * never awaits), so concurrent calls are serialized by the object and can never
 * over-admit; the decision and its write commit together, and the state survives
 * eviction and restarts.
 *
 * Storage stays bounded: each `admit` deletes its policy's entries that left the window
 * before it decides, so a policy never holds more than `limit` rows; an alarm one window
 * after the newest admitted request (or the kept bookmark's retention) deletes what is left,
 * so an object whose key or IP went quiet ends up with no storage at all.
 *
 * The object of a key also keeps the latest D1 bookmark of that key's writes
 * (src/rate-limit/bookmark.ts): `admit` hands it back with the decision, so a read can start
 * its D1 session from it at no extra call, and `recordBookmark` stores a write's bookmark.
 *
 * Where the objects live, and why nothing is global. There is one object per API key
 * (`key:<key id>`) and one per client IP for failed authentications (`ip:<ip>`); no object
 * is shared by all traffic, no counter is global, so the limiter's load spreads over as many
 * objects as there are active keys and grows with them (docs/capacity.md). An object is
 * created near the Worker that first calls it and stays there (Cloudflare docs, Durable
 * Objects > Reference > Data location): a key's first request comes from where that key is
 * used, so its object sits in that region and its calls stay regional; an IP's object sits
 * near that IP. Location hints (`get(id, { locationHint })`) are not used: they only apply
 * when an object is first created, where the first request already is the best hint we
 * have, and a fixed hint per key would need a region recorded per key, which nothing knows.
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private schemaReady = false;
  /** When the pending clean-up alarm fires (ms), or null when none is set. */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /** Counts one request against its policy, and hands back the key's latest write bookmark. */
  admit(request: AdmitRequest): AdmitResult {
    const decision = this.hit(request.policy, request.limit, request.windowSeconds);
    const bookmark = readBookmark(this.sql);
    return bookmark === undefined ? { decision } : { decision, bookmark };
  }

  /**
   * Keeps `bookmark` (a D1 bookmark taken after one of the key's writes) if it is later than
   * the stored one; returns the one now stored, the latest of the key's writes.
   */
  recordBookmark(bookmark: string): string {
    this.ensureSchema();
    const now = Date.now();
    const latest = storeBookmark(this.sql, bookmark, now);
    if (this.alarmAt === null) this.scheduleCleanup(pruneBookmark(this.sql, now) ?? now);
    return latest;
  }

  /** The sliding window alone (synchronous, so its tests can drive it directly). */
  hit(policy: string, limit: number, windowSeconds: number): WindowDecision {
    this.ensureSchema();
    const windowMs = windowSeconds * 1000;
    const stored = this.sql
      .exec<{ at: number }>("SELECT at FROM window_hits WHERE policy = ? ORDER BY at", policy)
      .toArray()
      .map((row) => row.at);
    // The clock of a restarted or moved object may be slightly behind the newest entry;
    // time never runs backwards for a window, or its reset could exceed the window.
    const now = Math.max(Date.now(), stored.at(-1) ?? 0);
    const { pruneThrough, ...decision } = decide(stored, now, limit, windowMs);
    if (stored.length > 0 && (stored[0] ?? now) <= pruneThrough) {
      this.sql.exec("DELETE FROM window_hits WHERE policy = ? AND at <= ?", policy, pruneThrough);
    }
    if (decision.allowed) {
      this.sql.exec(
        "INSERT INTO window_hits (policy, at, until) VALUES (?, ?, ?)",
        policy,
        now,
        now + windowMs,
      );
      if (this.alarmAt === null) this.scheduleCleanup(now + windowMs);
    }
    return decision;
  }

  /** Deletes every entry that left its window; with nothing left, all of the object's storage. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.ensureSchema();
    const now = Date.now();
    this.sql.exec("DELETE FROM window_hits WHERE until <= ?", now);
    const last = this.sql.exec<{ until: number | null }>("SELECT max(until) AS until FROM window_hits").one();
    const bookmarkUntil = pruneBookmark(this.sql, now);
    const next = Math.max(last.until ?? 0, bookmarkUntil ?? 0);
    if (next === 0) {
      await this.ctx.storage.deleteAll();
      this.schemaReady = false;
      return;
    }
    this.scheduleCleanup(next);
  }

  /** Admitted requests currently stored for each policy (for tests and diagnostics). */
  usage(): Record<string, number> {
    this.ensureSchema();
    const rows = this.sql
      .exec<{ policy: string; n: number }>("SELECT policy, count(*) AS n FROM window_hits GROUP BY policy")
      .toArray();
    return Object.fromEntries(rows.map((r) => [r.policy, r.n]));
  }

  private scheduleCleanup(at: number) {
    this.alarmAt = at;
    // Not awaited: like the SQL writes, the alarm write commits before the reply leaves.
    void this.ctx.storage.setAlarm(at);
  }

  private ensureSchema() {
    if (this.schemaReady) return;
    for (const statement of SCHEMA) this.sql.exec(statement);
    this.schemaReady = true;
  }
}
