/**
 * The exact sliding window: the decision, as pure functions so it can be tested over a fake
 * clock, and the window as a limiter object (./limiter.ts) stores it (`countHit`, below).
 *
 * `stored` holds the times (ms) of the requests admitted so far (any order; entries that
 * have already left the window are ignored). A request at `now` is admitted exactly when
 * fewer than `limit` admitted requests lie in (now - windowMs, now]: an entry admitted at
 * `at` counts until `at + windowMs` and not at that instant. No buckets, no estimate.
 */
export type WindowDecision = {
  allowed: boolean;
  limit: number;
  /** Requests still admissible in the current window, after this one. */
  remaining: number;
  /**
   * Whole seconds, rounded up, until the oldest request counted in the window (this one
   * included when admitted) leaves it, so that `remaining` grows again; 0 when the window
   * is empty. On a refusal this is ≥ 1 and a retry after that many seconds is admitted.
   */
  reset: number;
};

export type WindowStep = WindowDecision & {
  /** Stored entries with `at <= pruneThrough` have left the window: delete them. */
  pruneThrough: number;
};

export function decide(stored: readonly number[], now: number, limit: number, windowMs: number): WindowStep {
  const pruneThrough = now - windowMs;
  let count = 0;
  let oldest: number | null = null;
  for (const at of stored) {
    if (at <= pruneThrough) continue;
    count++;
    if (oldest === null || at < oldest) oldest = at;
  }
  return { ...decideCounted({ count, oldest }, now, limit, windowMs), pruneThrough };
}

/**
 * The same decision from what the window holds, summarized: how many admitted requests lie in
 * (now - windowMs, now] and the oldest of them. The Durable Object asks SQLite for these two
 * (an aggregate over its index) instead of reading every entry.
 */
export function decideCounted(
  inWindow: { count: number; oldest: number | null },
  now: number,
  limit: number,
  windowMs: number,
): WindowDecision {
  let { count, oldest } = inWindow;
  const allowed = count < limit;
  if (allowed) {
    count++;
    if (oldest === null || now < oldest) oldest = now;
  }
  const reset = count === 0 || oldest === null ? 0 : Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  return { allowed, limit, remaining: Math.max(0, limit - count), reset };
}

/**
 * Each policy's admitted times (ms, ascending), exactly the rows of `window_hits`
 * (./migrations.ts): read once per policy and object lifetime, then kept in step with every
 * write, so a request costs one INSERT and no read (and a DELETE when entries leave the window).
 * Holds what the table holds, at most `limit` times per policy.
 */
export type StoredWindows = Map<string, number[]>;

/**
 * Counts one request against `policy` in the object's storage: deletes the entries that left the
 * window, decides, and stores the request when admitted. `until`: when an admitted request
 * leaves the window (the object's clean-up alarm is due by then), else null.
 */
export function countHit(
  sql: SqlStorage,
  windows: StoredWindows,
  policy: string,
  limit: number,
  windowSeconds: number,
): { decision: WindowDecision; until: number | null } {
  const windowMs = windowSeconds * 1000;
  const window = windowOf(sql, windows, policy);
  // The clock of a restarted or moved object may be slightly behind the newest entry;
  // time never runs backwards for a window, or its reset could exceed the window.
  const now = Math.max(Date.now(), window.at(-1) ?? 0);
  const pruneThrough = now - windowMs;
  // Ascending, so the entries that left the window are a prefix of it.
  const kept = window.findIndex((at) => at > pruneThrough);
  const left = kept === -1 ? window.length : kept;
  if (left > 0) {
    sql.exec("DELETE FROM window_hits WHERE policy = ? AND at <= ?", policy, pruneThrough);
    window.splice(0, left);
  }
  const decision = decideCounted({ count: window.length, oldest: window[0] ?? null }, now, limit, windowMs);
  if (!decision.allowed) return { decision, until: null };
  sql.exec("INSERT INTO window_hits (policy, at, until) VALUES (?, ?, ?)", policy, now, now + windowMs);
  window.push(now);
  return { decision, until: now + windowMs };
}

/**
 * The window of `policy` as a request at this moment would find it, counting nothing: for a request
 * refused before its window was asked (API_CONTRACT §33's live streams), whose answer carries the
 * window's headers and, like every request refused with 429, does not count (§7).
 */
export function windowState(
  sql: SqlStorage,
  windows: StoredWindows,
  policy: string,
  limit: number,
  windowSeconds: number,
): WindowDecision {
  const windowMs = windowSeconds * 1000;
  const window = windowOf(sql, windows, policy);
  const now = Math.max(Date.now(), window.at(-1) ?? 0);
  const inWindow = window.filter((at) => at > now - windowMs);
  const count = inWindow.length;
  const oldest = inWindow[0];
  const reset = oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  return { allowed: count < limit, limit, remaining: Math.max(0, limit - count), reset };
}

/**
 * Deletes every entry that left its window (of every policy: the caller forgets `windows`);
 * returns when the last entry left leaves its window, or null when none is left.
 */
export function pruneWindows(sql: SqlStorage, now: number): number | null {
  sql.exec("DELETE FROM window_hits WHERE until <= ?", now);
  return sql.exec<{ until: number | null }>("SELECT max(until) AS until FROM window_hits").one().until;
}

/** Admitted requests currently stored for each policy. */
export function windowUsage(sql: SqlStorage): Record<string, number> {
  const rows = sql
    .exec<{ policy: string; n: number }>("SELECT policy, count(*) AS n FROM window_hits GROUP BY policy")
    .toArray();
  return Object.fromEntries(rows.map((r) => [r.policy, r.n]));
}

/** A policy's stored window, read from SQLite on its first use in this object's lifetime. */
function windowOf(sql: SqlStorage, windows: StoredWindows, policy: string): number[] {
  let window = windows.get(policy);
  if (!window) {
    window = [];
    for (const [at] of sql.exec("SELECT at FROM window_hits WHERE policy = ? ORDER BY at", policy).raw()) {
      window.push(at as number);
    }
    windows.set(policy, window);
  }
  return window;
}
