#!/usr/bin/env node
// `wrangler types --check` (part of `npm test`): worker-configuration.d.ts must match
// wrangler.toml. The types also list the secret names found in .dev.vars, which a fresh clone
// does not have yet: the check runs in a scratch copy of the config whose .dev.vars is
// .dev.vars.example (what `npm run dev` starts from), so it neither depends on nor creates the
// developer's own .dev.vars.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { wrangler } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const scratch = mkdtempSync(join(tmpdir(), "worker-types-"));
for (const file of ["wrangler.toml", "worker-configuration.d.ts"])
  copyFileSync(join(root, file), join(scratch, file));
copyFileSync(join(root, ".dev.vars.example"), join(scratch, ".dev.vars"));
// wrangler runs the [build] step (scripts/) and reads the entry (src/) even for a check.
for (const dir of ["src", "scripts", "node_modules"])
  symlinkSync(join(root, dir), join(scratch, dir), "junction");
try {
  execFileSync(wrangler, ["types", "--check", "--include-runtime=false", "--strict-vars=false"], {
    cwd: scratch,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  console.log("wrangler types --check: worker-configuration.d.ts is up to date");
} catch (err) {
  process.stderr.write(`${err.stdout ?? ""}${err.stderr ?? ""}`);
  console.error(
    "worker-configuration.d.ts is out of date with wrangler.toml or the secret names in " +
      ".dev.vars.example: run `npm run cf-typegen` (with .dev.vars copied from .dev.vars.example) and commit it.",
  );
  process.exitCode = 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
