#!/usr/bin/env node
// Applies the D1 migrations to every database of an environment: the directory and each
// organization database (src/db/databases.ts), one `wrangler d1 migrations apply` per binding of
// wrangler.toml's d1_databases, in order; the first that fails stops the run (the next run
// applies what is left: wrangler records what each database has).
//
//   node scripts/migrate.mjs --local [--persist-to=DIR]     npm run dev (scripts/dev.mjs)
//   node scripts/migrate.mjs --remote --env staging         the deploy workflow
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readEnvironment } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(
  root,
  "node_modules",
  ".bin",
  process.platform === "win32" ? "wrangler.cmd" : "wrangler",
);

/** The D1 bindings of `env` (undefined: local development), in wrangler.toml's order. */
export function d1Bindings(env) {
  return readEnvironment(env).d1_databases.map((d) => d.binding);
}

/** `wrangler d1 migrations apply <binding> …args` for each binding; returns what each printed. */
export function migrateAll(env, args) {
  return d1Bindings(env).map((binding) => {
    const out = execFileSync(
      wrangler,
      ["d1", "migrations", "apply", binding, ...args, ...(env ? ["--env", env] : [])],
      {
        encoding: "utf8",
        env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    return { binding, out };
  });
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
