#!/usr/bin/env node
// Applies the D1 migrations to every database of an environment: the directory and each
// organization database (src/db/databases.ts), one `wrangler d1 migrations apply` per binding of
// wrangler.toml's d1_databases, in order; the first that fails stops the run (the next run
// applies what is left: wrangler records what each database has).
//
//   node scripts/migrate.mjs --local [--persist-to=DIR]     npm run dev (scripts/dev.mjs)
//   node scripts/migrate.mjs --remote --env staging         the deploy workflow
//
// On a local state without databases each gets every migration in one `wrangler d1 execute`
// (`newLocalDatabase`), and no `migrations apply` once its file records them all (`migrate`).
import { execFileSync } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readEnvironment, wrangler } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** `wrangler …args`, non-interactive; what it printed (an error carries `stdout` and `stderr`). */
export function wranglerSync(args) {
  return execFileSync(wrangler, args, {
    encoding: "utf8",
    cwd: root,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** The `--env` that wrangler arguments name, if any. */
export function envOf(args) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--env" || args[i] === "-e") return args[i + 1];
    if (args[i].startsWith("--env=")) return args[i].slice("--env=".length);
  }
  return undefined;
}

/** The D1 bindings of `env` (undefined: local development), in wrangler.toml's order. */
export function d1Bindings(env) {
  return readEnvironment(env).d1_databases.map((d) => d.binding);
}

const quoted = (identifier) => `"${identifier.replaceAll('"', '""')}"`;

/**
 * The local state directory that `args` choose (`--persist-to`, else wrangler's `.wrangler/state`),
 * or undefined when they are not local or name another `--config` (whose state is its own).
 */
function localStateDir(args) {
  if (!args.includes("--local") || args.some((a) => /^(-c|--config)(=|$)/.test(a))) return undefined;
  const at = args.findIndex((a) => a === "--persist-to" || a.startsWith("--persist-to="));
  return at < 0
    ? join(root, ".wrangler", "state")
    : resolve(root, args[at].includes("=") ? args[at].slice("--persist-to=".length) : args[at + 1]);
}

/**
 * Whether the local state that `args` choose holds no D1 database yet: a newcomer's first
 * `npm run dev`, and every check's fresh state. Only a hint (wrangler's layout, `v3/d1`):
 * `newLocalDatabase` still makes its table as the batch's first statement, so a database that has
 * one refuses the whole batch.
 */
export function noLocalDatabases(args) {
  const state = localStateDir(args);
  return state !== undefined && !existsSync(join(state, "v3", "d1"));
}

/** The migrations of a binding's `config` in wrangler's order, or undefined where wrangler alone orders them. */
export function migrationsOf(config) {
  if (!config || config.migrations_pattern) return undefined;
  const dir = join(root, config.migrations_dir ?? "migrations");
  const names = readdirSync(dir).filter((name) => name.endsWith(".sql"));
  // wrangler's order: by the leading number, then by name.
  if (names.some((name) => !/^\d+_/.test(name))) return undefined;
  names.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10) || (a < b ? -1 : a > b ? 1 : 0));
  return { dir, names, table: config.migrations_table ?? "d1_migrations" };
}

/**
 * The file of `binding`'s local database in the state that `args` choose, if it exists. Miniflare
 * keeps a local D1 database in a Durable Object of its class `D1DatabaseObject`, named by the
 * binding's `database_id`, and workerd keeps an object in `<its id in hex>.sqlite`, an id that
 * `idFromName` derives from the name: HMAC-SHA-256 of the name, keyed by the SHA-256 of the
 * namespace's unique key (`miniflare-D1DatabaseObject`), for its first 16 bytes, and HMAC of
 * those for the other 16 (workerd's ActorIdFactoryImpl). Wrangler's own layout, not a promise:
 * a configuration it does not cover (a `preview_database_id`, which local development may use
 * instead) or a layout that changed finds no file, and the callers fall back on wrangler.
 */
export function localDatabaseFile(binding, args) {
  const state = localStateDir(args);
  const config = readEnvironment(envOf(args)).d1_databases.find((d) => d.binding === binding);
  if (state === undefined || !config?.database_id || config.preview_database_id) return undefined;
  const key = createHash("sha256").update("miniflare-D1DatabaseObject").digest();
  const first = createHmac("sha256", key).update(config.database_id).digest().subarray(0, 16);
  const second = createHmac("sha256", key).update(first).digest().subarray(0, 16);
  const id = Buffer.concat([first, second]).toString("hex");
  const file = join(state, "v3", "d1", "miniflare-D1DatabaseObject", `${id}.sqlite`);
  return existsSync(file) ? file : undefined;
}

/** node:sqlite, without the "experimental" warning Node 22 prints when it is loaded. */
function sqlite() {
  const emit = process.emitWarning;
  process.emitWarning = (warning, ...rest) =>
    String(warning).includes("SQLite") ? undefined : emit.call(process, warning, ...rest);
  try {
    return process.getBuiltinModule("node:sqlite");
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * The rows of `sql` (one read) in `binding`'s local database, read from its file without starting
 * wrangler (about 2.5 s each time); undefined when the file is not found or cannot be read.
 */
export function readLocalDatabase(binding, args, sql) {
  const file = localDatabaseFile(binding, args);
  if (file === undefined) return undefined;
  try {
    const db = new (sqlite().DatabaseSync)(file, { readOnly: true });
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Whether `config`'s local database (a binding of wrangler.toml's d1_databases) records every
 * migration of its `migrations_dir` in its migrations table, read from its file
 * (`localDatabaseFile`). Any doubt (the database not found, a migration not recorded, a file that
 * cannot be read, a `migrations_pattern`) is false.
 */
function recordsEveryMigration(config, args) {
  const migrations = migrationsOf(config);
  const rows =
    migrations && readLocalDatabase(config.binding, args, `SELECT name FROM ${quoted(migrations.table)}`);
  const applied = new Set(rows?.map((row) => row.name));
  return rows !== undefined && migrations.names.every((name) => applied.has(name));
}

/**
 * Whether wrangler's `migrations apply` would find nothing to apply in any local database of the
 * environment that `args` choose (`recordsEveryMigration` for each). A later `npm run dev` then
 * starts no wrangler for each database (two starts, about 5 s); on any doubt wrangler's apply runs
 * as before.
 */
export function nothingToApply(args) {
  return readEnvironment(envOf(args)).d1_databases.every((config) => recordsEveryMigration(config, args));
}

/**
 * Every migration of `binding` applied to a new local database in one `wrangler d1 execute
 * --file`: one runtime, where wrangler's `migrations apply` starts one for each migration (a fresh
 * state's two databases, interleaved twice on an idle machine: 36–42 s of wall time and 43–50 CPU-s
 * that way, 15–19 s and 18–23 CPU-s with wrangler's apply run after each batch to find nothing
 * left; what is left is mostly wrangler's own start). The file is what wrangler's apply runs, in
 * its order: its migrations table (made by `CREATE TABLE` without `IF NOT EXISTS`, so that on a
 * database migrated before the batch fails as a whole and changes nothing), then each migration's
 * SQL followed by the row that records it (wrangler's `buildMigrationQuery`), then `after` (the
 * demo rows of `npm run dev`, on the state's directory database), all in one D1 batch: the
 * database ends migrated wholly or not at all. `migrate` reads the table back from the database's
 * file; check:dev has wrangler's own apply find nothing left on such a state. Returns the
 * migrations applied: none when the database had its table (and `after` is not run), or `binding`
 * has a `migrations_pattern` or a migration without a leading number (wrangler's to order).
 */
function newLocalDatabase(binding, args, after = []) {
  const migrations = migrationsOf(
    readEnvironment(envOf(args)).d1_databases.find((d) => d.binding === binding),
  );
  if (!migrations) return [];
  const { dir, names, table } = migrations;
  const sql = [
    `CREATE TABLE ${quoted(table)}(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`,
    ...names.map(
      (name) =>
        `${readFileSync(join(dir, name), "utf8")}\nINSERT INTO ${quoted(table)} (name)\nvalues ('${name.replaceAll("'", "''")}');`,
    ),
    ...after.map((statement) => `${statement};`),
  ].join("\n");
  const temp = mkdtempSync(join(tmpdir(), "migrate-"));
  try {
    const file = join(temp, "migrations.sql");
    writeFileSync(file, sql);
    wranglerSync(["d1", "execute", binding, ...args, "--file", file]);
  } catch (err) {
    if (`${err.stdout}${err.stderr}`.includes(`table ${quoted(table)} already exists`)) return [];
    throw err;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return names;
}

/**
 * `wrangler d1 migrations apply <binding> …args` (`args` with `--local` or `--remote`, and the
 * environment's `--env`); returns what it printed. `fresh` (`noLocalDatabases`, asked before the
 * first database is made): every migration at once first (`newLocalDatabase`, with `after` in the
 * same batch), and when the database's file then records every one, no wrangler apply (two starts
 * fewer for a fresh state, ~5 s: wrangler's apply would only find nothing to do). Where the file
 * cannot be read, wrangler's apply runs and must find nothing left.
 */
export function migrate(binding, args, fresh = false, after = []) {
  const applied = fresh ? newLocalDatabase(binding, args, after) : [];
  const more = after.length > 0 ? ` and ${after.length} more statements` : "";
  const batch = `${applied.length} migrations applied to a new local database in one batch${more} (${applied.at(-1)} the last)`;
  const config = readEnvironment(envOf(args)).d1_databases.find((d) => d.binding === binding);
  if (applied.length > 0 && recordsEveryMigration(config, args))
    return `${batch}; its file records them all: no wrangler apply.`;
  const out = wranglerSync(["d1", "migrations", "apply", binding, ...args]);
  if (applied.length > 0 && !out.includes("No migrations to apply"))
    throw Object.assign(
      new Error(`wrangler did not find the ${applied.length} migrations recorded as applied to ${binding}`),
      { stdout: out, stderr: "" },
    );
  return applied.length > 0 ? `${batch}.\n${out}` : out;
}

/** `migrate` for each binding of `env`, in order; returns what each printed. */
export function migrateAll(env, args) {
  const all = [...args, ...(env ? ["--env", env] : [])];
  const fresh = noLocalDatabases(all);
  return d1Bindings(env).map((binding) => ({ binding, out: migrate(binding, all, fresh) }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const envAt = args.indexOf("--env");
  const env = envAt >= 0 ? args[envAt + 1] : undefined;
  const rest = envAt >= 0 ? args.filter((_, i) => i !== envAt && i !== envAt + 1) : args;
  try {
    for (const { binding, out } of migrateAll(env, rest)) console.log(`${binding}:\n${out}`);
  } catch (err) {
    console.error(err.stdout ?? "", err.stderr ?? err.message);
    process.exit(1);
  }
}
