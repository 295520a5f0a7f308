import { DurableObject } from "cloudflare:workers";
import { decide, type WindowDecision } from "./window";

// `until` (= at + the policy's window) lets the clean-up alarm work without knowing policies.
const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)",
  "CREATE INDEX IF NOT EXISTS window_hits_policy_at ON window_hits (policy, at)",
];

/**
 * One object per API key (or per client IP for anonymous traffic), one exact sliding
 * window per policy. Admitted requests are rows in the object's SQLite storage.
 *
 * `hit` runs entirely synchronously (SQL on the object's storage is synchronous, and it
 * never awaits), so concurrent calls are serialized by the object and can never
 * over-admit; the decision and its write commit together, and the state survives
 * eviction and restarts.
 *
 * Storage stays bounded: each `hit` deletes its policy's entries that left the window
 * before it decides, so a policy never holds more than `limit` rows; an alarm one window
 * after the newest admitted request deletes what is left, so an object whose key or IP
 * went quiet ends up with no storage at all.
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
    if (last.until === null) {
      await this.ctx.storage.deleteAll();
      this.schemaReady = false;
      return;
    }
    this.scheduleCleanup(last.until);
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
