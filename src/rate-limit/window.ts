/**
 * The exact sliding window, as a pure function so it can be tested over a fake clock.
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
