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
// first (`newLocalDatabase`), and wrangler's `migrations apply` then finds nothing left to apply.
import { execFileSync } from "node:child_process";
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
 * Whether the local state that `args` choose (`--persist-to`, else wrangler's `.wrangler/state`)
 * holds no D1 database yet: a newcomer's first `npm run dev`, and every check's fresh state.
 * Only a hint (wrangler's layout, `v3/d1`): `newLocalDatabase` still makes its table as the
 * batch's first statement, so a database that has one refuses the whole batch.
 */
export function noLocalDatabases(args) {
  if (!args.includes("--local") || args.some((a) => /^(-c|--config)(=|$)/.test(a))) return false;
  const at = args.findIndex((a) => a === "--persist-to" || a.startsWith("--persist-to="));
  const state =
    at < 0
      ? join(root, ".wrangler", "state")
      : resolve(root, args[at].includes("=") ? args[at].slice("--persist-to=".length) : args[at + 1]);
  return !existsSync(join(state, "v3", "d1"));
}

/**
 * Every migration of `binding` applied to a new local database in one `wrangler d1 execute
 * --file`: one runtime, where wrangler's `migrations apply` starts one for each migration (a fresh
 * state's two databases, interleaved twice on an idle machine: 36–42 s of wall time and 43–50 CPU-s
 * that way, 15–19 s and 18–23 CPU-s this way; what is left is mostly wrangler's own start, twice
 * per database). The file is what wrangler's apply runs, in its order: its migrations
 * table (made by `CREATE TABLE` without `IF NOT EXISTS`, so that on a database migrated before the
 * batch fails as a whole and changes nothing), then each migration's SQL followed by the row that
 * records it (wrangler's `buildMigrationQuery`), all in one D1 batch: the database ends migrated
 * wholly or not at all. wrangler's apply, run next, reads that table and must find nothing left
 * (`migrate` checks), so wrangler itself vouches for what was recorded. Returns the migrations
 * applied: none when the database had its table, or `binding` has a `migrations_pattern` or a
 * migration without a leading number (wrangler's to order).
 */
function newLocalDatabase(binding, args) {
  const config = readEnvironment(envOf(args)).d1_databases.find((d) => d.binding === binding);
  if (!config || config.migrations_pattern) return [];
  const table = config.migrations_table ?? "d1_migrations";
  const dir = join(root, config.migrations_dir ?? "migrations");
  const names = readdirSync(dir).filter((name) => name.endsWith(".sql"));
  // wrangler's order: by the leading number, then by name.
  if (names.some((name) => !/^\d+_/.test(name))) return [];
  names.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10) || (a < b ? -1 : a > b ? 1 : 0));
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
 * first database is made): every migration at once first (`newLocalDatabase`).
 */
export function migrate(binding, args, fresh = false) {
  const applied = fresh ? newLocalDatabase(binding, args) : [];
  const out = wranglerSync(["d1", "migrations", "apply", binding, ...args]);
  if (applied.length > 0 && !out.includes("No migrations to apply"))
    throw Object.assign(
      new Error(`wrangler did not find the ${applied.length} migrations recorded as applied to ${binding}`),
      { stdout: out, stderr: "" },
    );
  return applied.length > 0
    ? `${applied.length} migrations applied to a new local database in one batch (${applied.at(-1)} the last).\n${out}`
    : out;
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
