/**
 * The retry schedule (API_CONTRACT §8). A delivery's lane counts the tries of its series (1 on
 * the first, src/delivery-lane/object.ts); after try n fails the next is due RETRY_DELAYS_SECONDS[n - 1]
 * later. MAX_ATTEMPTS tries in all; after the last one the lane hands the delivery to the
 * dead-letter queue.
 */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** The longest a receiver's Retry-After can put off the next try (12 h). */
export const MAX_RETRY_AFTER_SECONDS = 12 * 3600;

/**
 * Seconds to wait after try `attempt` failed, or null when it was the last try. A receiver's
 * Retry-After can lengthen the wait (never shorten it: the schedule protects the receiver too),
 * up to MAX_RETRY_AFTER_SECONDS.
 */
export function retryDelaySeconds(attempt: number, retryAfterSeconds?: number): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const scheduled = RETRY_DELAYS_SECONDS[Math.max(0, attempt - 1)] ?? RETRY_DELAYS_SECONDS[0];
  const wanted = Math.max(scheduled, Math.ceil(retryAfterSeconds ?? 0));
  return Math.min(wanted, MAX_RETRY_AFTER_SECONDS);
}

/** Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP date. Unparseable → undefined. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
