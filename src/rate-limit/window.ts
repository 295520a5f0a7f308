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
  let oldest = Number.POSITIVE_INFINITY;
  for (const at of stored) {
    if (at <= pruneThrough) continue;
    count++;
    if (at < oldest) oldest = at;
  }
  const allowed = count < limit;
  if (allowed) {
    count++;
    if (now < oldest) oldest = now;
  }
  const reset = count === 0 ? 0 : Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  return { allowed, limit, remaining: Math.max(0, limit - count), reset, pruneThrough };
}
