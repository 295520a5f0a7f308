/**
 * The exact sliding window, as a pure function so it can be tested over a fake clock.
 *
 * `admitted` holds the times (ms) of the requests admitted in this window, oldest first.
 * A request at `now` is admitted when fewer than `limit` admitted requests lie in
 * (now - windowMs, now]. An entry leaves the window at `at + windowMs`.
 */
export type WindowDecision = {
  allowed: boolean;
  limit: number;
  /** Requests still admissible in the current window, after this one. */
  remaining: number;
  /** Whole seconds (rounded up) until the oldest counted request leaves the window; 0 when empty. */
  reset: number;
  /** Entries that have left the window and can be deleted (at <= now - windowMs). */
  expiredBefore: number;
};

export function decide(
  admitted: readonly number[],
  now: number,
  limit: number,
  windowMs: number,
): WindowDecision {
  const cutoff = now - windowMs;
  const live = admitted.filter((at) => at > cutoff);
  const allowed = live.length < limit;
  const count = allowed ? live.length + 1 : live.length;
  const oldest = live.length > 0 ? Math.min(...live) : allowed ? now : undefined;
  const reset = oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  return { allowed, limit, remaining: Math.max(0, limit - count), reset, expiredBefore: cutoff };
}
