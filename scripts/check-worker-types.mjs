#!/usr/bin/env node
// `wrangler types --check` (part of `npm test`): worker-configuration.d.ts must match
// wrangler.toml. The types also list the secret names found in .dev.vars, so a fresh clone
// first gets .dev.vars from .dev.vars.example, exactly as `npm run dev` does.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);
if (!existsSync(".dev.vars")) copyFileSync(".dev.vars.example", ".dev.vars");
const wrangler = join(
  root,
  "node_modules",
  ".bin",
  process.platform === "win32" ? "wrangler.cmd" : "wrangler",
);
try {
  execFileSync(wrangler, ["types", "--check", "--include-runtime=false", "--strict-vars=false"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  console.log("wrangler types --check: worker-configuration.d.ts is up to date");
} catch (err) {
  process.stderr.write(`${err.stdout ?? ""}${err.stderr ?? ""}`);
  console.error(
    "worker-configuration.d.ts is out of date with wrangler.toml (or .dev.vars names secrets that " +
      ".dev.vars.example does not): run `npm run cf-typegen` and commit the result.",
  );
  process.exit(1);
}
