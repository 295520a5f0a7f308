import { DurableObject } from "cloudflare:workers";
import {
  type ClaimOutcome,
  claimKey,
  countKeys,
  expireKeys,
  IDEMPOTENCY_SCHEMA,
  type IdempotencyClaim,
  type StoredAnswer,
  settleKey,
} from "./idempotency";
import { decide, type WindowDecision } from "./window";

/**
 * One call per authenticated request. Each feature adds its own optional field here and in
 * `AdmitResult`, so the request still costs one call whatever it carries.
 */
export type AdmitRequest = {
  policy: string;
  limit: number;
  windowSeconds: number;
  /** API_CONTRACT §11: claim this Idempotency-Key, only if the request is admitted. */
  idempotency?: IdempotencyClaim;
};

export type AdmitResult = {
  decision: WindowDecision;
  /** Present when the request asked for a claim and was admitted. */
  idempotency?: ClaimOutcome;
};

/** Settles a claimed key: stores the answer, or (`answer: null`) releases the key. */
export type SettleRequest = { idempotency: IdempotencyClaim; answer: StoredAnswer | null };

// `until` (= at + the policy's window) lets the clean-up alarm work without knowing policies.
const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)",
  "CREATE INDEX IF NOT EXISTS window_hits_policy_at ON window_hits (policy, at)",
  ...IDEMPOTENCY_SCHEMA,
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
 * went quiet ends up with no storage at all. Idempotency entries (./idempotency.ts) live
 * beside the window; the alarm also fires when the oldest of them expires, and keeps the
 * object's storage while any is live.
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

  /** The rate-limit decision and, when admitted, the idempotency claim: one call, one step. */
  admit(request: AdmitRequest): AdmitResult {
    const decision = this.hit(request.policy, request.limit, request.windowSeconds);
    if (!request.idempotency || !decision.allowed) return { decision };
    const { expiresAt, ...claim } = claimKey(this.sql, request.idempotency, Date.now());
    if (expiresAt !== undefined && (this.alarmAt === null || this.alarmAt > expiresAt)) {
      this.scheduleCleanup(expiresAt);
    }
    return { decision, idempotency: claim };
  }

  /** The second call of a request that claimed a key: stores its answer or releases the key. */
  settle(request: SettleRequest): void {
    this.ensureSchema();
    settleKey(this.sql, request.idempotency, request.answer);
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
      // Earlier than a pending alarm set for an idempotency entry's expiry, too.
      if (this.alarmAt === null || this.alarmAt > now + windowMs) this.scheduleCleanup(now + windowMs);
    }
    return decision;
  }

  /**
   * Deletes every window entry that left its window and every expired idempotency entry; with
   * nothing left, all of the object's storage. Next run: when the window is empty again, or
   * when the oldest idempotency entry expires, whichever comes first.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.ensureSchema();
    const now = Date.now();
    this.sql.exec("DELETE FROM window_hits WHERE until <= ?", now);
    const last = this.sql.exec<{ until: number | null }>("SELECT max(until) AS until FROM window_hits").one();
    const nextExpiry = expireKeys(this.sql, now);
    const next = [last.until, nextExpiry].filter((at): at is number => at !== null);
    if (next.length === 0) {
      await this.ctx.storage.deleteAll();
      this.schemaReady = false;
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

  private ensureSchema() {
    if (this.schemaReady) return;
    for (const statement of SCHEMA) this.sql.exec(statement);
    this.schemaReady = true;
  }
}
