/**
 * The storage of a limiter object (./limiter.ts), one numbered step after another, applied by
 * src/lib/do-migrations.ts. Append-only: a deployed step is never edited, a change is the next
 * number. The statements are written out here rather than taken from the modules that use the
 * tables, so that editing a module can never change what a deployed migration did.
 *
 * Version 1 is the schema objects had before this list existed, every statement with IF NOT
 * EXISTS: those objects already hold it, and only record it.
 */
import type { Migration } from "../lib/do-migrations";

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: [
      // The sliding window (./window.ts). `until` (= at + the policy's window) lets the clean-up
      // alarm work without knowing policies.
      "CREATE TABLE IF NOT EXISTS window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)",
      "CREATE INDEX IF NOT EXISTS window_hits_policy_at ON window_hits (policy, at)",
      // The key's latest D1 bookmark (./bookmark.ts).
      "CREATE TABLE IF NOT EXISTS d1_bookmark (id INTEGER PRIMARY KEY CHECK (id = 1), bookmark TEXT NOT NULL, until INTEGER NOT NULL)",
      // Idempotency-Key claims and their answers (src/idempotency/store.ts).
      `CREATE TABLE IF NOT EXISTS idempotency (
     key TEXT PRIMARY KEY,
     fingerprint TEXT NOT NULL,
     state TEXT NOT NULL,
     lease_until INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     status INTEGER,
     headers TEXT,
     body TEXT,
     ref TEXT
   )`,
      "CREATE INDEX IF NOT EXISTS idempotency_expires_at ON idempotency (expires_at)",
      `CREATE TABLE IF NOT EXISTS idempotency_parts (
     key TEXT NOT NULL,
     n INTEGER NOT NULL,
     size INTEGER NOT NULL,
     part BLOB NOT NULL,
     PRIMARY KEY (key, n)
   )`,
      // The key's last use (./key-use.ts). `key_use_database` is a table of its own because it
      // came after `key_use`: an object whose `key_use` predates it has no row, and reads the
      // directory's database.
      "CREATE TABLE IF NOT EXISTS key_use (id INTEGER PRIMARY KEY CHECK (id = 1), key_id TEXT NOT NULL, used_at INTEGER NOT NULL, written_at INTEGER, due_at INTEGER)",
      "CREATE TABLE IF NOT EXISTS key_use_database (id INTEGER PRIMARY KEY CHECK (id = 1), database TEXT NOT NULL)",
    ],
  },
  {
    // API_CONTRACT §28: the keys of a family share one object, so it keeps the last use of each of
    // them (./key-use.ts), one row per key; the one key's row an object held moves over.
    version: 2,
    sql: [
      "CREATE TABLE key_uses (key_id TEXT PRIMARY KEY, database TEXT NOT NULL, used_at INTEGER NOT NULL, written_at INTEGER, due_at INTEGER)",
      `INSERT INTO key_uses (key_id, database, used_at, written_at, due_at)
     SELECT k.key_id, coalesce(d.database, 'DB'), k.used_at, k.written_at, k.due_at
     FROM key_use k LEFT JOIN key_use_database d ON d.id = 1`,
      "DROP TABLE key_use",
      "DROP TABLE key_use_database",
    ],
  },
  {
    // API_CONTRACT §27: a trust's object keeps the `jti` of every token it exchanged until the
    // token expires (./jti.ts).
    version: 3,
    sql: [
      "CREATE TABLE oidc_jti (jti TEXT PRIMARY KEY, until INTEGER NOT NULL)",
      "CREATE INDEX oidc_jti_until ON oidc_jti (until)",
    ],
  },
];
