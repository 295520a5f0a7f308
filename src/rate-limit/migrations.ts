/**
 * The storage of a limiter object (./limiter.ts), one numbered step after another, applied by
 * src/lib/do-migrations.ts. Append-only: a deployed step is never edited, a change is the next
 * number. The statements are written out here rather than taken from the modules that use the
 * tables, so that editing a module can never change what a deployed migration did.
 *
 * Version 1 is the schema objects had before this list existed, every statement with IF NOT
 * EXISTS: those objects already hold it, and only record it.
 */
import type { Baseline, Migration } from "../lib/do-migrations";

// The statements that make a table or index of today's schema, each named once: the steps below
// and BASELINE run the same text.
const WINDOW_HITS =
  "CREATE TABLE IF NOT EXISTS window_hits (policy TEXT NOT NULL, at INTEGER NOT NULL, until INTEGER NOT NULL)";
const WINDOW_HITS_INDEX = "CREATE INDEX IF NOT EXISTS window_hits_policy_at ON window_hits (policy, at)";
const D1_BOOKMARK =
  "CREATE TABLE IF NOT EXISTS d1_bookmark (id INTEGER PRIMARY KEY CHECK (id = 1), bookmark TEXT NOT NULL, until INTEGER NOT NULL)";
const IDEMPOTENCY = `CREATE TABLE IF NOT EXISTS idempotency (
     key TEXT PRIMARY KEY,
     fingerprint TEXT NOT NULL,
     state TEXT NOT NULL,
     lease_until INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     status INTEGER,
     headers TEXT,
     body TEXT,
     ref TEXT
   )`;
const IDEMPOTENCY_INDEX = "CREATE INDEX IF NOT EXISTS idempotency_expires_at ON idempotency (expires_at)";
const IDEMPOTENCY_PARTS = `CREATE TABLE IF NOT EXISTS idempotency_parts (
     key TEXT NOT NULL,
     n INTEGER NOT NULL,
     size INTEGER NOT NULL,
     part BLOB NOT NULL,
     PRIMARY KEY (key, n)
   )`;
const KEY_USES =
  "CREATE TABLE key_uses (key_id TEXT PRIMARY KEY, database TEXT NOT NULL, used_at INTEGER NOT NULL, written_at INTEGER, due_at INTEGER)";
const OIDC_JTI = "CREATE TABLE oidc_jti (jti TEXT PRIMARY KEY, until INTEGER NOT NULL)";
const OIDC_JTI_INDEX = "CREATE INDEX oidc_jti_until ON oidc_jti (until)";
const STREAM_LEASES = "CREATE TABLE stream_leases (id TEXT PRIMARY KEY, until INTEGER NOT NULL)";

/**
 * What migration 1 made that still stands, in its order: the sliding window (./window.ts; `until`
 * = at + the policy's window lets the clean-up alarm work without knowing policies), the key's
 * latest D1 bookmark (./bookmark.ts), Idempotency-Key claims and their answers
 * (src/idempotency/store.ts).
 */
const STANDING_SINCE_V1 = [
  WINDOW_HITS,
  WINDOW_HITS_INDEX,
  D1_BOOKMARK,
  IDEMPOTENCY,
  IDEMPOTENCY_INDEX,
  IDEMPOTENCY_PARTS,
] as const;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: [
      ...STANDING_SINCE_V1,
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
      KEY_USES,
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
    sql: [OIDC_JTI, OIDC_JTI_INDEX],
  },
  {
    // API_CONTRACT §33: the family's live streams, one lease each (./stream-leases.ts).
    version: 4,
    sql: [STREAM_LEASES],
  },
];

/**
 * What migrations 1–4 leave, for a limiter with no storage (src/lib/do-migrations.ts `Baseline`):
 * a new key's object, and every key's after a quiet minute (its alarm deletes all of its storage),
 * makes it in 13 statements instead of 20. A migration added to the list is applied after it.
 */
export const BASELINE: Baseline = {
  version: 4,
  sql: [...STANDING_SINCE_V1, KEY_USES, OIDC_JTI, OIDC_JTI_INDEX, STREAM_LEASES],
};
