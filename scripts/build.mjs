#!/usr/bin/env node
// The deployed Worker's build (wrangler.toml `[env.*]`: wrangler's custom build, then `no_bundle`):
// `node scripts/build.mjs <outdir>`, run from the checkout's root (wrangler runs it beside
// wrangler.toml), bundles src/index.ts with esbuild's code splitting into
// `<outdir>/index.js` and one chunk per group of modules that only some operations load, which
// wrangler uploads as separate ES modules (`find_additional_modules`). Also fills dist/assets (the
// /docs renderer, scripts/docs-assets.mjs), as the local [build] step does.
//
// Why not wrangler's own bundle (what `npm run dev` serves): in one bundle, esbuild turns each
// `import("./routes/…")` into a call of a module wrapped in a function (`__esm`), and every module
// such a module imports — zod, hono, Drizzle, the services: nearly the whole start — is wrapped
// too. V8 compiles a wrapped function lazily, when the start calls it, so what the start evaluates
// is parsed twice. Split, a module is wrapped nowhere and an operation's modules are a chunk loaded
// on its first request: a new isolate starts in ~0.65× the time (bench/README.md, "Startup").
//
// Concurrent builds of the same tree (the two environments' dry runs in `npm run check:deploy`,
// a local server of the build beside them) write the same files: each is written under a temporary
// name and renamed into place, so a reader sees the old file or the new one, never half of one.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { buildDocsAssets } from "./docs-assets.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * esbuild's options as wrangler bundles the API of the checkout `root` for `npm run dev`
 * (wrangler.toml: minified, no keep_names, the zod alias; workerd's conditions). The deployed build
 * adds splitting; bench/operation-builds.mjs bundles with them.
 */
export const asWranglerBuilds = (root) => ({
  bundle: true,
  format: "esm",
  // Minified, a new isolate has less JavaScript to compile (wrangler.toml's `minify`); the source
  // maps beside the modules read the stack frames of src/http/error-handler.ts's log back.
  minify: true,
  // keepNames wraps every function the bundle creates in a `__name(fn, "…")` call, closures made
  // per request included (issue #12).
  keepNames: false,
  target: "es2024",
  platform: "browser",
  conditions: ["workerd", "worker", "browser"],
  external: ["cloudflare:*", "node:*"],
  // zod's entry without the modules this Worker never uses (src/lib/zod/index.ts).
  alias: { zod: join(root, "src", "lib", "zod", "index.ts") },
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "error",
});

/**
 * Builds the API of the checkout `root` into `outdir` (the entry `index.js`, its chunks, their
 * source maps) and removes what an earlier build left there. Returns esbuild's metafile.
 */
export async function buildWorker(outdir, tree = root) {
  const result = await esbuild.build({
    ...asWranglerBuilds(tree),
    entryPoints: { index: join(tree, "src", "index.ts") },
    absWorkingDir: tree,
    splitting: true,
    sourcemap: "linked",
    outdir,
    write: false,
    metafile: true,
  });
  mkdirSync(outdir, { recursive: true });
  const written = new Set();
  for (const file of result.outputFiles) {
    written.add(file.path);
    let same = false;
    try {
      same = readFileSync(file.path).equals(file.contents);
    } catch {}
    if (same) continue;
    mkdirSync(dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  writeFileSync(join(outdir, "meta.json.tmp"), JSON.stringify(result.metafile));
  renameSync(join(outdir, "meta.json.tmp"), join(outdir, "meta.json"));
  written.add(join(outdir, "meta.json"));
  // Chunks of an earlier build: wrangler would upload every .js file here.
  for (const name of readdirSync(outdir, { recursive: true })) {
    const path = join(outdir, String(name));
    if (/\.js(\.map)?$/.test(path) && !written.has(path)) rmSync(path, { force: true });
  }
  return result.metafile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2];
  if (!target) {
    console.error("usage: node scripts/build.mjs <outdir>");
    process.exit(2);
  }
  const outdir = isAbsolute(target) ? target : join(process.cwd(), target);
  buildDocsAssets();
  // The tree beside the wrangler.toml that runs this (a bench snapshot links scripts/ to this one).
  const meta = await buildWorker(outdir, process.cwd());
  const chunks = Object.keys(meta.outputs).filter((path) => path.endsWith(".js")).length;
  console.log(
    `scripts/build.mjs: ${relative(process.cwd(), outdir) || "."}: index.js and ${chunks - 1} chunks`,
  );
  if (!existsSync(join(outdir, "index.js"))) process.exit(1);
}
