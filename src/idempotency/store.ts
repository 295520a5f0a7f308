/**
 * Idempotency keys (API_CONTRACT §11), stored in the RateLimiter object of the sending API key's
 * family (src/rate-limit/limiter.ts; §28), each key's under its own name (`familyClaim`,
 * src/middleware/rate-limit.ts), beside the window: the object is already called once on every
 * authenticated request, is strongly consistent and runs one call at a time, so claiming a key in the same call as the rate-limit
 * decision makes "exactly one execution" a property of that single-threaded call, at no extra
 * round trip on the way in. These functions are synchronous SQL on the object's storage: a
 * claim and its write commit together.
 *
 * An entry is `running` from its claim until the request settles: `done` (the answer is
 * stored) or deleted (a 5xx, or a request that never finished releases it). Every entry is
 * forgotten 24 h after its claim (the object's alarm deletes it; a claim also ignores an
 * expired one). A `running` entry whose request died with its isolate holds its key for at
 * most LEASE_MS: then the key can be claimed again, and the claim says the key `lapsed`, since
 * that request may have committed before it died (the write's own record of its key, in D1, then
 * decides: src/idempotency/executed.ts).
 *
 * The tables, `idempotency` and `idempotency_parts`, are created by the limiter object's numbered
 * migrations (src/rate-limit/migrations.ts), beside the rest of its storage: a migration, once
 * deployed, never changes, so its statements are written out there, not taken from here.
 */

/** Keys are remembered this long after the first request (API_CONTRACT §11). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claim protects a request that never settles (its isolate died). Requests here are
 * a few D1 round trips; a request still running after a minute has been cut off.
 */
export const LEASE_MS = 60_000;

/** What the caller asks for: the key, and the request's fingerprint (a hex digest). */
export type IdempotencyClaim = { key: string; fingerprint: string };

/**
 * An answer. Settled: `body` is the whole body (null when empty) and `ref` the path of the record
 * it carried, if any, to keep instead should the object's budget for large answers be spent.
 * Replayed: `body` as stored, or null and `ref` set when it was kept by reference.
 */
export type StoredAnswer = {
  status: number;
  headers: Record<string, string>;
  body: string | null;
  /** The path of the record the answer carried, re-read on replay instead of a stored copy. */
  ref: string | null;
};

/**
 * How a claimed request settles its key: with its answer; released (`null`: nothing ran); or
 * `"lapsed"`: left as a claim whose request never settled, so that the next claim asks D1 again
 * (the key is held by a write another request made: ../idempotency/executed.ts).
 */
export type Settlement = StoredAnswer | null | "lapsed";

/** Answers up to this size (UTF-8 bytes) are kept in their entry's row. */
export const INLINE_ANSWER_BYTES = 64 * 1024;
/** A larger answer is kept whole in parts of at most this size (rows stay under the 2 MB limit). */
const PART_BYTES = 1_000_000;
/**
 * What one object keeps of larger answers before it keeps them by reference. At the full rate
 * limit a key could otherwise keep 24 h of 1 MiB answers (over 100 GB; an object holds 10 GB):
 * past the budget, a large answer that carried a record is kept as that record's path and re-read
 * on replay. One that carried none (a members add's page) has nothing to refer to and is still
 * kept whole, so this bounds the common case, not every case.
 */
export const LARGE_ANSWERS_BUDGET_BYTES = 256 * 1024 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type ClaimOutcome =
  /**
   * `lapsed`: the key was held by a claim whose request never settled (its isolate died): that
   * request may have committed its write before it died, so D1 is asked (../idempotency/executed.ts).
   */
  | { state: "claimed"; lapsed?: true }
  | { state: "in_flight" }
  | { state: "mismatch" }
  | { state: "replay"; answer: StoredAnswer };

type Row = {
  fingerprint: string;
  state: "running" | "done";
  lease_until: number;
  expires_at: number;
  status: number | null;
  headers: string | null;
  body: string | null;
  ref: string | null;
};

/** Claims `claim.key` at `now`, or says why not. Returns the new entry's expiry when claimed. */
export function claimKey(
  sql: SqlStorage,
  claim: IdempotencyClaim,
  now: number,
): ClaimOutcome & { expiresAt?: number } {
  const row = sql.exec<Row>("SELECT * FROM idempotency WHERE key = ?", claim.key).toArray()[0];
  const live = row && row.expires_at > now && (row.state === "done" || row.lease_until > now);
  if (row && live) {
    if (row.fingerprint !== claim.fingerprint) return { state: "mismatch" };
    if (row.state === "running") return { state: "in_flight" };
    return {
      state: "replay",
      answer: {
        status: row.status ?? 500,
        headers: row.headers ? (JSON.parse(row.headers) as Record<string, string>) : {},
        body: row.body ?? (row.ref === null ? readParts(sql, claim.key) : null),
        ref: row.ref,
      },
    };
  }
  // An expired entry, or a claim that never settled: what it kept goes with it.
  if (row) sql.exec("DELETE FROM idempotency_parts WHERE key = ?", claim.key);
  const lapsed = row !== undefined && row.expires_at > now && row.state === "running";
  const expiresAt = now + IDEMPOTENCY_TTL_MS;
  sql.exec(
    `INSERT INTO idempotency (key, fingerprint, state, lease_until, expires_at) VALUES (?, ?, 'running', ?, ?)
     ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running',
       lease_until = excluded.lease_until, expires_at = excluded.expires_at,
       status = NULL, headers = NULL, body = NULL, ref = NULL`,
    claim.key,
    claim.fingerprint,
    now + LEASE_MS,
    expiresAt,
  );
  return lapsed ? { state: "claimed", lapsed, expiresAt } : { state: "claimed", expiresAt };
}

/**
 * Stores the answer of a claimed request (`answer`), releases its key (no answer), or lets its
 * claim lapse (`"lapsed"`). An answer
 * is kept whole: in its row up to INLINE_ANSWER_BYTES, else in parts; by reference only when it
 * carried a record and the object's large answers would pass `budget`, or when it has no body
 * but a record's path (an answer rebuilt from D1).
 */
export function settleKey(
  sql: SqlStorage,
  claim: IdempotencyClaim,
  answer: Settlement,
  budget = LARGE_ANSWERS_BUDGET_BYTES,
): void {
  if (answer === "lapsed") {
    sql.exec(
      "UPDATE idempotency SET lease_until = 0 WHERE key = ? AND fingerprint = ? AND state = 'running'",
      claim.key,
      claim.fingerprint,
    );
    return;
  }
  if (!answer) {
    sql.exec(
      "DELETE FROM idempotency WHERE key = ? AND fingerprint = ? AND state = 'running'",
      claim.key,
      claim.fingerprint,
    );
    return;
  }
  const bytes = answer.body === null ? null : encoder.encode(answer.body);
  const large = bytes !== null && bytes.byteLength > INLINE_ANSWER_BYTES;
  // By reference: an answer that is nothing but its record's path (one rebuilt from D1 for an
  // execution whose answer was lost, ./executed.ts), or a large one past the budget.
  const byReference =
    answer.ref !== null &&
    (bytes === null ||
      (large &&
        sql.exec<{ kept: number }>("SELECT coalesce(sum(size), 0) AS kept FROM idempotency_parts").one()
          .kept +
          bytes.byteLength >
          budget));
  const settled = sql.exec(
    `UPDATE idempotency SET state = 'done', status = ?, headers = ?, body = ?, ref = ?
     WHERE key = ? AND fingerprint = ? AND state = 'running'`,
    answer.status,
    JSON.stringify(answer.headers),
    large ? null : answer.body,
    byReference ? answer.ref : null,
    claim.key,
    claim.fingerprint,
  );
  // Settled by this call (not released meanwhile by a lapsed lease): its parts, if any.
  if (!large || byReference || settled.rowsWritten === 0) return;
  for (let n = 0, at = 0; at < bytes.byteLength; n++, at += PART_BYTES) {
    const part = bytes.slice(at, at + PART_BYTES);
    sql.exec(
      "INSERT INTO idempotency_parts (key, n, size, part) VALUES (?, ?, ?, ?)",
      claim.key,
      n,
      part.byteLength,
      part.buffer,
    );
  }
}

/** The body kept in parts for `key`, or null (none: the answer had no body). */
function readParts(sql: SqlStorage, key: string): string | null {
  const parts = sql
    .exec<{ part: ArrayBuffer }>("SELECT part FROM idempotency_parts WHERE key = ? ORDER BY n", key)
    .toArray();
  if (parts.length === 0) return null;
  const bytes = new Uint8Array(parts.reduce((total, p) => total + p.part.byteLength, 0));
  let at = 0;
  for (const { part } of parts) {
    bytes.set(new Uint8Array(part), at);
    at += part.byteLength;
  }
  return decoder.decode(bytes);
}

/** Deletes expired entries; returns the earliest expiry left, or null when none is left. */
export function expireKeys(sql: SqlStorage, now: number): number | null {
  sql.exec(
    "DELETE FROM idempotency_parts WHERE key IN (SELECT key FROM idempotency WHERE expires_at <= ?)",
    now,
  );
  sql.exec("DELETE FROM idempotency WHERE expires_at <= ?", now);
  return sql.exec<{ at: number | null }>("SELECT min(expires_at) AS at FROM idempotency").one().at;
}

/** Entries currently stored (for tests and diagnostics). */
export function countKeys(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM idempotency").one().n;
}
