import { DurableObject } from "cloudflare:workers";
import { decide, type WindowDecision } from "./window";

/**
 * One object per API key (or per client IP for anonymous traffic), one exact sliding
 * window per policy. Admitted requests are rows in the object's SQLite storage.
 *
 * `hit` runs entirely synchronously (SQL on the object's storage is synchronous), so
 * concurrent calls are serialized by the object's input gate and can never over-admit;
 * the decision and its write are one atomic step, and the state survives eviction.
 * Pruning on access keeps at most `limit` rows per policy.
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY AUTOINCREMENT, policy TEXT NOT NULL, at INTEGER NOT NULL)",
    );
    this.sql.exec("CREATE INDEX IF NOT EXISTS hits_policy_at ON hits (policy, at)");
  }

  hit(policy: string, limit: number, windowSeconds: number): WindowDecision {
    const now = Date.now();
    const windowMs = windowSeconds * 1000;
    this.sql.exec("DELETE FROM hits WHERE policy = ? AND at <= ?", policy, now - windowMs);
    const admitted = this.sql
      .exec<{ at: number }>("SELECT at FROM hits WHERE policy = ? ORDER BY at", policy)
      .toArray()
      .map((row) => row.at);
    const decision = decide(admitted, now, limit, windowMs);
    if (decision.allowed) this.sql.exec("INSERT INTO hits (policy, at) VALUES (?, ?)", policy, now);
    return decision;
  }

  /** Admitted requests currently in each policy's window (for tests and diagnostics). */
  usage(): Record<string, number> {
    const rows = this.sql
      .exec<{ policy: string; n: number }>("SELECT policy, count(*) AS n FROM hits GROUP BY policy")
      .toArray();
    return Object.fromEntries(rows.map((r) => [r.policy, r.n]));
  }
}
