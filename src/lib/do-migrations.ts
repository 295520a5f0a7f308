/**
 * The schema of a Durable Object's own SQLite storage, as one numbered list per object class
 * (`MIGRATIONS` beside each object: src/rate-limit/migrations.ts, src/delivery-lane/migrations.ts,
 * src/feed/object.ts), applied by `migrate`. The list is append-only: a migration, once deployed,
 * is never edited; a change to the storage is the next number. Each object records the versions
 * applied to it in its own storage (`do_migrations`), so an object whose storage was made by an
 * older deployment gets exactly the migrations that came after it, and one that deleted all its
 * storage (an idle limiter or lane does) starts again from the first.
 *
 * The objects that were deployed before these lists existed already hold the tables of their
 * migration 1 and no record of it: each migration 1 is that schema written with IF NOT EXISTS, so
 * it is harmless on them, and they then record version 1 like a new object.
 *
 * wrangler.toml's `[[migrations]]` are another thing: they create and rename object classes;
 * what is inside an object's storage is the object's own code to keep, and this is where it does.
 */

/**
 * One step of an object's schema: SQL statements run in order, or, for a step SQL alone cannot
 * say (SQLite has no `ADD COLUMN IF NOT EXISTS`), a function of the storage's SQL handle.
 */
export type Migration =
  | { readonly version: number; readonly sql: readonly string[] }
  | { readonly version: number; readonly apply: (sql: SqlStorage) => void };

/** Where an object records the versions applied to its storage: one row per migration. */
export const MIGRATIONS_TABLE = "do_migrations";

/**
 * The schema that migrations 1 to `version` leave, written as it stands: what a storage that holds
 * nothing yet gets in their place, in one transaction, with their versions recorded. A new
 * object (or one that deleted all of its storage: an idle limiter does, a minute after its key's
 * last request) then runs a few statements instead of every step's, tables made to be dropped
 * included. test/properties/do-migrations.test.ts holds each baseline to the schema its
 * migrations make, and the list stays the only history: a storage that holds anything takes
 * the steps.
 */
export type Baseline = { readonly version: number; readonly sql: readonly string[] };

/**
 * Applies to `storage` every migration of `migrations` not yet recorded there, in order, each in
 * a transaction of its own with the record of its version, so that a migration that fails leaves
 * neither its changes nor its record and runs again at the object's next start; a storage with no
 * table at all takes `baseline` in place of the migrations it stands for. Returns the versions
 * it applied. Synchronous (SQLite storage never awaits): called where an object sets up its
 * storage, before any statement of it runs. A list with nothing in it touches no storage.
 *
 * A storage that records a version the list does not have (code rolled back past a migration)
 * gets nothing: the later migration's tables stay, unknown to this code, as after any rollback.
 */
export function migrate(
  storage: DurableObjectStorage,
  migrations: readonly Migration[],
  baseline?: Baseline,
): number[] {
  checkNumbering(migrations);
  if (baseline && (baseline.version < 1 || baseline.version > migrations.length)) {
    throw new Error(
      `a baseline stands for migrations 1 to ${baseline.version}, which the list does not hold`,
    );
  }
  if (migrations.length === 0) return [];
  const { sql } = storage;
  const tables = sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .toArray()
    .filter((t) => !RUNTIME_TABLE.test(t.name));
  let applied = 0;
  const done: number[] = [];
  if (tables.some((t) => t.name === MIGRATIONS_TABLE)) {
    applied =
      sql.exec<{ version: number | null }>(`SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`).one()
        .version ?? 0;
  } else if (tables.length === 0 && baseline) {
    const versions = migrations.slice(0, baseline.version).map((m) => m.version);
    storage.transactionSync(() => {
      sql.exec(CREATE_MIGRATIONS_TABLE);
      for (const statement of baseline.sql) sql.exec(statement);
      sql.exec(
        `INSERT INTO ${MIGRATIONS_TABLE} (version, applied_at) VALUES ${versions.map(() => "(?, ?)").join(", ")}`,
        ...versions.flatMap((version) => [version, Date.now()]),
      );
    });
    applied = baseline.version;
    done.push(...versions);
  } else {
    sql.exec(CREATE_MIGRATIONS_TABLE);
  }
  for (const migration of migrations) {
    if (migration.version <= applied) continue;
    storage.transactionSync(() => {
      if ("sql" in migration) for (const statement of migration.sql) sql.exec(statement);
      else migration.apply(sql);
      sql.exec(
        `INSERT INTO ${MIGRATIONS_TABLE} (version, applied_at) VALUES (?, ?)`,
        migration.version,
        Date.now(),
      );
    });
    done.push(migration.version);
  }
  return done;
}

/**
 * Tables that are not the object's own: the runtime's (its key-value storage and alarm), SQLite's,
 * and the one in which `wrangler dev` (miniflare) records the name an object was made from.
 */
const RUNTIME_TABLE = /^(?:_cf_|sqlite_|__miniflare_)/;

const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`;

/** Versions are 1, 2, 3, … in list order: a gap or a reordering is a mistake in the list. */
function checkNumbering(migrations: readonly Migration[]): void {
  for (const [i, migration] of migrations.entries()) {
    if (migration.version !== i + 1) {
      throw new Error(
        `Durable Object migrations must be numbered 1, 2, 3, … in order: found ${migration.version} at position ${i + 1}`,
      );
    }
  }
}
