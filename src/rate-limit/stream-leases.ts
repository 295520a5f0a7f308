/**
 * The live streams a key family holds open (API_CONTRACT §33: at most 10 at once), as its limiter
 * object (./limiter.ts) keeps them: one lease per stream in `stream_leases` (./migrations.ts), each
 * with the instant it lapses unless its stream renews it. The object answers each call in one
 * synchronous step, so the count and the admission are one decision: of N streams opened at once
 * with k places free, exactly min(N, k) are admitted, whichever isolates they reach.
 *
 * A lease, not a counter: a stream gives its place back when it ends (`releaseStream`), and renews
 * its lease while it lasts (src/rate-limit/stream-place.ts, every quarter of the lease); one whose
 * isolate crashed, or whose release was lost, gives it back when its lease lapses: no place is held
 * longer than a lease (20 s) after its stream is gone.
 */

export type StreamLeaseRequest = {
  /** The stream's lease (a new id per stream). */
  id: string;
  /** Streams the family may hold open at once. */
  limit: number;
  /** How long the lease lasts unless renewed, ms. */
  leaseMs: number;
};

export type StreamAdmission = { admitted: true } | { admitted: false; retryAfter: number };

/** The leases not lapsed at `now` (the lapsed ones deleted): how many, and when the soonest lapses. */
function liveLeases(sql: SqlStorage, now: number): { count: number; soonest: number | null } {
  sql.exec("DELETE FROM stream_leases WHERE until <= ?", now);
  return sql
    .exec<{ count: number; soonest: number | null }>(
      "SELECT count(*) AS count, min(until) AS soonest FROM stream_leases",
    )
    .one();
}

/**
 * Whether the family has a place for one more stream. Refused: `retryAfter`, whole seconds until
 * the soonest lease lapses unless its stream renews it (at most the lease): a place may free sooner,
 * as soon as a stream ends.
 */
export function streamRoom(sql: SqlStorage, request: StreamLeaseRequest, now: number): StreamAdmission {
  const { count, soonest } = liveLeases(sql, now);
  if (count < request.limit) return { admitted: true };
  return { admitted: false, retryAfter: Math.max(1, Math.ceil(((soonest ?? now) - now) / 1000)) };
}

/** Takes the place `streamRoom` found: returns when the lease lapses (the clean-up alarm is due by then). */
export function openLease(sql: SqlStorage, request: StreamLeaseRequest, now: number): number {
  const until = now + request.leaseMs;
  sql.exec("INSERT OR REPLACE INTO stream_leases (id, until) VALUES (?, ?)", request.id, until);
  return until;
}

/**
 * Renews a stream's lease; a lease that lapsed meanwhile (its renewals late) is taken again while
 * there is room. Returns when it now lapses, or null: its place is gone (another stream holds it).
 */
export function renewLease(sql: SqlStorage, request: StreamLeaseRequest, now: number): number | null {
  const until = now + request.leaseMs;
  const renewed = sql.exec(
    "UPDATE stream_leases SET until = ? WHERE id = ? AND until > ?",
    until,
    request.id,
    now,
  );
  if (renewed.rowsWritten > 0) return until;
  return streamRoom(sql, request, now).admitted ? openLease(sql, request, now) : null;
}

/** Gives a stream's place back (it ended). */
export function releaseLease(sql: SqlStorage, id: string): void {
  sql.exec("DELETE FROM stream_leases WHERE id = ?", id);
}

/** Deletes the lapsed leases; returns when the last one left lapses, or null when none is left. */
export function pruneLeases(sql: SqlStorage, now: number): number | null {
  sql.exec("DELETE FROM stream_leases WHERE until <= ?", now);
  return sql.exec<{ until: number | null }>("SELECT max(until) AS until FROM stream_leases").one().until;
}

/** The leases held at `now` (for tests and diagnostics). */
export function countLeases(sql: SqlStorage, now: number): number {
  return liveLeases(sql, now).count;
}
