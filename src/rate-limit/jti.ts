/**
 * An exchanged ID token (API_CONTRACT §27: a `jti` is exchanged at most once while its token is
 * valid), kept in a limiter object of its own (`oidc-jti:<SHA-256 of issuer and jti>`,
 * src/services/oidc/exchange.ts; src/rate-limit/limiter.ts): strongly consistent and one call at
 * a time, so of two exchanges of one token on two isolates at once, under one trust or two,
 * exactly one claims it; and one object per token, so no issuer's exchanges queue behind another's.
 * The entry is kept until its token expires (at most 24 h and 60 s after the exchange, as the
 * exchange's checks bound `exp`), then pruned by the object's alarm, which leaves it empty. The
 * `jti` is stored as the exchange hands it over (a SHA-256 digest): entries of one size, whatever a
 * token carries. Its table, `oidc_jti`: ./migrations.ts (migration 3).
 */

/**
 * Claims `jti` until `until` (ms): true when no unexpired claim of it exists (it is now claimed),
 * false for a replay. An expired claim of the same `jti` is taken over.
 */
export function claimJti(sql: SqlStorage, jti: string, until: number, now: number): boolean {
  const taken = sql.exec<{ until: number }>("SELECT until FROM oidc_jti WHERE jti = ?", jti).toArray()[0];
  if (taken && taken.until > now) return false;
  sql.exec(
    "INSERT INTO oidc_jti (jti, until) VALUES (?, ?) ON CONFLICT (jti) DO UPDATE SET until = excluded.until",
    jti,
    until,
  );
  return true;
}

/** Forgets the claim of `jti` (an exchange that made no key gives it back). */
export function releaseJti(sql: SqlStorage, jti: string): void {
  sql.exec("DELETE FROM oidc_jti WHERE jti = ?", jti);
}

/** Forgets every claim whose token has expired; returns when the next one does, or null with none left. */
export function pruneJtis(sql: SqlStorage, now: number): number | null {
  sql.exec("DELETE FROM oidc_jti WHERE until <= ?", now);
  return sql.exec<{ until: number | null }>("SELECT min(until) AS until FROM oidc_jti").one().until;
}

/** How many claims the object keeps (for tests and diagnostics). */
export function countJtis(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM oidc_jti").one().n;
}
