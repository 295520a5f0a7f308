// The API as it deploys (wrangler.toml `[env.*]`: scripts/build.mjs, esbuild's code splitting,
// uploaded as many modules with `no_bundle`), for bench/startup.mjs beside wrangler's one bundle
// (what `npm run dev` serves): the snapshot's top-level configuration pointed at that build, so
// that the bench's servers and `wrangler check startup` run it without an environment's bindings.
import { execFileSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildWorker } from "../scripts/build.mjs";

/**
 * Builds the API snapshot in `dir` (bench/lib.mjs `snapshot("api")`) as the deployed environments
 * build it into `dir/dist/worker`, and points the snapshot's wrangler.toml at the chunks.
 */
export async function splitBuild(dir) {
  await buildWorker(join(dir, "dist", "worker"), dir);
  const config = join(dir, "wrangler.toml");
  const deployed = /^\[env\.production\]\n(?:[^[\n][^\n]*\n|\n)*/m.exec(readFileSync(config, "utf8"))[0];
  const keys = ["no_bundle", "find_additional_modules", "rules", "minify"].map((key) => {
    const line = new RegExp(`^${key} = .*$`, "m").exec(deployed)?.[0];
    if (!line) throw new Error(`wrangler.toml [env.production] has no ${key}`);
    return line;
  });
  const toml = readFileSync(config, "utf8").replace(
    /^main = .*$/m,
    ['main = "dist/worker/index.js"', 'base_dir = "dist/worker"', ...keys].join("\n"),
  );
  writeFileSync(config, toml.replace(/^minify = true\n/m, ""));
  return config;
}

/**
 * The API of this tree and of the commit `base` (a git worktree; its own bench/lib.mjs and this
 * module make its snapshot), each built as it deploys: `run({ this, base })` with each snapshot's
 * wrangler.toml, then the worktree removed. For the scripts that pair two builds.
 */
export async function withBaseBuild(base, run) {
  if (!base) throw new Error("BASE=<commit>: the build to pair this tree with");
  const lib = await import("./lib.mjs");
  const dir = join(lib.tmp, "base");
  execFileSync("git", ["worktree", "add", "--detach", dir, base], { cwd: lib.root, stdio: "ignore" });
  symlinkSync(join(lib.root, "node_modules"), join(dir, "node_modules"));
  try {
    const baseLib = await import(join(dir, "bench", "lib.mjs"));
    const baseSplit = await import(join(dir, "bench", "split-build.mjs"));
    const configs = { this: lib.snapshot("api", {}), base: baseLib.snapshot("api", {}) };
    await splitBuild(dirname(configs.this));
    await baseSplit.splitBuild(dirname(configs.base));
    return await run(configs);
  } finally {
    execFileSync("git", ["worktree", "remove", "--force", dir], { cwd: lib.root });
  }
}
