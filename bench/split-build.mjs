// A prototype for bench/startup.mjs: the API built with esbuild's code splitting (each operation's
// modules a chunk of their own, loaded by its dynamic import on first use), uploaded as many
// modules (`no_bundle`, `find_additional_modules`), instead of wrangler's one bundle. Not how the
// API deploys: it shows what the bundle's shape costs a new isolate.
//
// Why: in one bundle, esbuild turns each `import("./routes/…")` into a call of a module wrapped in
// a function (`__esm`), and every module such a module imports (zod, hono, Drizzle, the services:
// nearly the whole start) is wrapped too. V8 compiles a wrapped module's function lazily, when the
// start calls it: what the start evaluates is parsed twice, once when the bundle is compiled and
// again when it runs (bench/README.md, "Startup"). With splitting, a module is wrapped only where
// a chunk needs it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as esbuild from "esbuild";

/**
 * esbuild's options as wrangler.toml has wrangler bundle the API of the checkout `root` (minified,
 * no keep_names, the zod alias, workerd's conditions): bench/operation-builds.mjs too.
 */
export const asWranglerBuilds = (root) => ({
  bundle: true,
  format: "esm",
  minify: true,
  keepNames: false,
  target: "es2024",
  platform: "browser",
  conditions: ["workerd", "worker", "browser"],
  external: ["cloudflare:*", "node:*"],
  alias: { zod: join(root, "src", "lib", "zod", "index.ts") },
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "error",
});

/**
 * Builds the API snapshot in `dir` (bench/lib.mjs `snapshot("api")`) into `dir/dist/worker` with
 * esbuild's splitting and the options wrangler builds it with (wrangler.toml: minify, no
 * keep_names, the zod alias), and points the snapshot's wrangler.toml at the chunks.
 */
export async function splitBuild(dir) {
  const outdir = join(dir, "dist", "worker");
  await esbuild.build({
    ...asWranglerBuilds(dir),
    entryPoints: { index: join(dir, "src", "index.ts") },
    absWorkingDir: dir,
    splitting: true,
    outdir,
  });
  const config = join(dir, "wrangler.toml");
  const toml = readFileSync(config, "utf8")
    .replace(/^\[alias\]\n(?:"[^\n]*\n)+/m, "")
    .replace(
      /^main = .*$/m,
      [
        'main = "dist/worker/index.js"',
        "no_bundle = true",
        "find_additional_modules = true",
        'base_dir = "dist/worker"',
        'rules = [{ type = "ESModule", globs = ["**/*.js"] }]',
      ].join("\n"),
    );
  writeFileSync(config, toml);
  return config;
}
