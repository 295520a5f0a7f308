// wrangler.toml's deployed environments, read by wrangler itself (scripts/check-deploy.mjs,
// scripts/check-workflows.mjs), and the project's wrangler bin (every script that runs it).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { experimental_readRawConfig, unstable_readConfig } from "wrangler";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const configPath = join(root, "wrangler.toml");

/** The project's own wrangler (node_modules/.bin), whatever else is on PATH. */
export const wrangler = join(
  root,
  "node_modules",
  ".bin",
  process.platform === "win32" ? "wrangler.cmd" : "wrangler",
);

/** The D1 database_ids an environment has until its real ones are filled in (docs/deploy.md). */
export const isPlaceholderId = (id) => /^00000000-0000-4000-8000-0000000000[0-9]{2}$/.test(id ?? "");

/** The names of wrangler.toml's `[env.<name>]` sections, in order. */
export const environments = () =>
  Object.keys(experimental_readRawConfig({ config: configPath }).rawConfig.env ?? {});

/** The configuration as wrangler resolves it for `--env <env>` (undefined: local development). */
export const readEnvironment = (env) =>
  unstable_readConfig({ config: configPath, env }, { hideWarnings: true });
