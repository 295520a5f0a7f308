#!/usr/bin/env node
// The deployed Worker's build (wrangler.toml `[env.*]`: wrangler's custom build, then `no_bundle`):
// `node scripts/build.mjs <outdir>` (relative to the checkout's root, whatever the working
// directory: wrangler runs a build command in its own) bundles src/index.ts with esbuild's code
// splitting into
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
// Concurrent builds of the same tree into one directory (a local server of the staging build beside
// `npm run check:deploy`'s dry run of it) write the same files: each is written under a temporary
// name of its process and renamed into place, the chunks before the entry that imports them, so a
// reader sees the old file or the new one, never half of one, and no entry without its chunks.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { buildDocsAssets } from "./docs-assets.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * esbuild's options as wrangler bundles the API of the checkout `root` for `npm run dev`
 * (wrangler.toml: minified, no keep_names, the zod alias; workerd's conditions). The deployed build
 * adds splitting.
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
  // Not `node:*`: without the nodejs_compat flag (wrangler.toml has none) wrangler's bundle fails
  // on such an import, and so does this build, rather than the upload or a request.
  external: ["cloudflare:*"],
  // zod's entry without the modules this Worker never uses (src/lib/zod/index.ts).
  alias: { zod: join(root, "src", "lib", "zod", "index.ts") },
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "error",
});

/**
 * Builds the API of the checkout `tree` into `target` (relative to `tree`): the entry `index.js`,
 * its chunks, their source maps and esbuild's metafile `meta.json`; removes what an earlier build
 * left there. Returns the metafile.
 */
export async function buildWorker(target, tree = root) {
  const outdir = resolve(tree, target);
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
  const outputs = plainNames(result);
  const entry = join(outdir, "index.js");
  const isEntry = (file) => file.path === entry || file.path === `${entry}.map`;
  const files = [
    ...outputs.filter((file) => !isEntry(file)),
    // The entry's map, then the entry, then what describes them.
    ...outputs.filter(isEntry).sort((a, b) => b.path.length - a.path.length),
    { path: join(outdir, "meta.json"), contents: new TextEncoder().encode(JSON.stringify(result.metafile)) },
  ];
  const written = new Set();
  for (const file of files) {
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
  // Chunks of an earlier build: wrangler would upload every .js file here.
  for (const name of readdirSync(outdir, { recursive: true })) {
    const path = join(outdir, String(name));
    if (/\.js(\.map)?$/.test(path) && !written.has(path)) rmSync(path, { force: true });
  }
  return result.metafile;
}

/**
 * The build's outputs with each module's name made plain: its 8-character content hash
 * (`chunk-6GQEKHAE.js`, `getProject-C4DUUCCF.js`) replaced by a count of the same length
 * (`chunk-0000000A.js`, `getProject-00000000.js`), in every import, source map comment and the
 * metafile (`result.metafile`, rewritten). The upload is gzipped whole (wrangler's figure, issue
 * #80), and every chunk imports tens of others by name: random names are most of what those
 * imports cost, 4 KiB of the gzip. Of the same length, every line keeps its columns, so the
 * source maps hold as they are; the modules are uploaded anew on every deploy, so no name needs
 * to change with its content.
 */
function plainNames(result) {
  const hashed = /([\w$]+)-([A-Z0-9]{8})\.js\b/g;
  const names = new Map();
  const counts = new Map();
  const paths = result.outputFiles.map((file) => file.path).filter((path) => path.endsWith(".js"));
  for (const path of paths.sort()) {
    const match = /([\w$]+)-([A-Z0-9]{8})\.js$/.exec(path);
    if (!match) continue;
    const n = counts.get(match[1]) ?? 0;
    counts.set(match[1], n + 1);
    names.set(match[0], `${match[1]}-${n.toString(36).toUpperCase().padStart(8, "0")}.js`);
  }
  const plain = (text) => text.replace(hashed, (name) => names.get(name) ?? name);
  result.metafile = JSON.parse(plain(JSON.stringify(result.metafile)));
  return result.outputFiles.map((file) => {
    const path = plain(file.path);
    if (!file.path.endsWith(".js")) return { path, contents: file.contents };
    return { path, contents: new TextEncoder().encode(plain(file.text)) };
  });
}

if (process.argv[1] && resolve(fileURLToPath(import.meta.url)) === resolve(process.argv[1])) {
  const target = process.argv[2];
  if (!target) {
    console.error("usage: node scripts/build.mjs <outdir, relative to the checkout>");
    process.exit(2);
  }
  buildDocsAssets();
  const meta = await buildWorker(target);
  const chunks = Object.keys(meta.outputs).filter((path) => path.endsWith(".js")).length;
  console.log(
    `scripts/build.mjs: ${relative(root, resolve(root, target))}: index.js and ${chunks - 1} chunks`,
  );
}
