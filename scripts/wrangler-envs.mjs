// wrangler.toml's deployed environments, read by wrangler itself (scripts/check-deploy.mjs,
// scripts/check-workflows.mjs).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { experimental_readRawConfig, unstable_readConfig } from "wrangler";

const configPath = join(dirname(fileURLToPath(import.meta.url)), "..", "wrangler.toml");

/** The D1 database_id an environment has until its real one is filled in (docs/deploy.md). */
export const PLACEHOLDER_ID = "00000000-0000-4000-8000-000000000000";

/** The names of wrangler.toml's `[env.<name>]` sections, in order. */
export const environments = () =>
  Object.keys(experimental_readRawConfig({ config: configPath }).rawConfig.env ?? {});

/** The configuration as wrangler resolves it for `--env <env>` (undefined: local development). */
export const readEnvironment = (env) =>
  unstable_readConfig({ config: configPath, env }, { hideWarnings: true });
