#!/usr/bin/env node
// The deployed Worker's build (wrangler.toml `[env.*]`: wrangler's custom build, then `no_bundle`):
// `node scripts/build.mjs <outdir>` (relative to the checkout's root, whatever the working
// directory: wrangler runs a build command in its own) bundles src/index.ts with esbuild's code
// splitting into
// `<outdir>/index.js` and one chunk per group of modules that only some operations load, which
// wrangler uploads as separate ES modules (`find_additional_modules`). Also fills dist/assets (the
// /docs renderer, scripts/docs-assets.mjs), as the local [build] step does, and writes there the
// OpenAPI document as the source serves it: the modules this build makes leave the document's prose
// out (scripts/build-document.mjs), and serve that file at /openapi.json (src/openapi/routes.ts).
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
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import {
  buildDocumentAsset,
  documentGeneratorPlugin,
  documentTextPlugin,
  jsonSchemaStubPlugin,
} from "./build-document.mjs";
import { buildDocsAssets } from "./docs-assets.mjs";
import { drizzleUnusedPlugin, pgEnumCheckPlugin } from "./lib/drizzle-stand-ins.mjs";

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
    // No OpenAPI generator and none of the document's prose (./build-document.mjs): `/openapi.json`
    // is the document this build writes among the assets (`buildDocumentAsset`), which
    // src/openapi/routes.ts reads when `__DOCUMENT_FROM_BUILD__` is defined, as src/mcp/tool-list.ts
    // reads the MCP tools' list, so zod's JSON Schema conversion is left out too. Nor drizzle-orm's
    // Postgres columns, nor the code of the methods src/ never calls (./lib/drizzle-stand-ins.mjs).
    plugins: [
      documentGeneratorPlugin,
      documentTextPlugin,
      pgEnumCheckPlugin,
      drizzleUnusedPlugin,
      jsonSchemaStubPlugin,
    ],
    define: { ...asWranglerBuilds(tree).define, "globalThis.__DOCUMENT_FROM_BUILD__": "true" },
  });
  const outputs = plainModules(result, tree);
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
 * The build's outputs made plain (`result.metafile` rewritten to match):
 *
 * - each module's name, without its 8-character content hash: a shared chunk (`chunk-6GQEKHAE.js`)
 *   is `c` and its count in base 36 (`ca.js`), an operation's module its own name
 *   (`getProject-C4DUUCCF.js` is `getProject.js`; with a count, `index-1.js`, where two share one
 *   or it is `index`), in every import, source map comment and the metafile. The upload is
 *   gzipped whole (wrangler's figure, issue #80), and every chunk imports tens of others by name:
 *   random names were most of what those imports cost (4 KiB of the gzip), and the 12 characters
 *   of a count like `chunk-0000000A` 1.2 KiB more. The modules are uploaded anew on every deploy,
 *   so no name needs to change with its content.
 * - each module's imports of chunks it only imports for their evaluation (`import"./chunk-….js";`)
 *   that an import before it in the same module already reaches (`redundantImports`): esbuild
 *   lists, in every module, every chunk that module's code depends on, directly or not, and
 *   3,400 of those lines import a chunk that is already evaluated by the time they are read: they
 *   cost 4.2 KiB of the gzip and change nothing, since a module is evaluated once, the first time
 *   an import reaches it. Every other import stays where it is, so every module is evaluated in
 *   the order it was.
 *
 * Each module's source map follows its text (`remapColumns`).
 */
function plainModules(result, tree) {
  const hashed = /([\w$]+)-([A-Z0-9]{8})\.js\b/g;
  const names = new Map();
  const counts = new Map();
  const js = result.outputFiles.filter((file) => file.path.endsWith(".js"));
  const hashedNames = js.map((file) => /([\w$]+)-([A-Z0-9]{8})\.js$/.exec(file.path)).filter(Boolean);
  for (const [, base] of hashedNames) counts.set(base, (counts.get(base) ?? 0) + 1);
  // An operation's module that a shared chunk's name would be (`c1`) keeps a count too.
  const isChunkName = (base) =>
    /^c[0-9a-z]+$/.test(base) && Number.parseInt(base.slice(1), 36) < (counts.get("chunk") ?? 0);
  const taken = new Map();
  for (const [name, base] of hashedNames.sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const n = taken.get(base) ?? 0;
    taken.set(base, n + 1);
    const plainName =
      base === "chunk"
        ? `c${n.toString(36)}.js`
        : counts.get(base) > 1 || base === "index" || isChunkName(base)
          ? `${base}-${n}.js`
          : `${base}.js`;
    names.set(name, plainName);
  }
  const unique = new Set(js.map((file) => names.get(basename(file.path)) ?? basename(file.path)));
  if (unique.size !== js.length) throw new Error("scripts/build.mjs: two modules would have one name");
  const plain = (text) => text.replace(hashed, (name) => names.get(name) ?? name);
  const dropped = redundantImports(js);
  const texts = new Map();
  const edited = new Map();
  for (const file of js) {
    const drops = dropped.get(file.path) ?? [];
    const edits = drops.map(({ start, end }) => ({ start, end, text: "" }));
    for (const match of file.text.matchAll(hashed)) {
      const name = names.get(match[0]);
      const at = match.index;
      if (name && name !== match[0] && !drops.some((d) => d.start <= at && at < d.end))
        edits.push({ start: at, end: at + match[0].length, text: name });
    }
    const { text, column } = applyEdits(file.text, edits);
    texts.set(file.path, text);
    edited.set(`${file.path}.map`, column);
  }
  const metafile = JSON.parse(plain(JSON.stringify(result.metafile)));
  for (const file of js) {
    const output = metafile.outputs[plain(relative(tree, file.path)).replaceAll("\\", "/")];
    const gone = new Set((dropped.get(file.path) ?? []).map((d) => plain(basename(d.target))));
    output.imports = output.imports.filter((i) => !gone.has(basename(i.path)));
    output.bytes = Buffer.byteLength(texts.get(file.path));
  }
  result.metafile = metafile;
  return result.outputFiles.map((file) => {
    const path = plain(file.path);
    if (texts.has(file.path)) return { path, contents: new TextEncoder().encode(texts.get(file.path)) };
    const column = edited.get(file.path);
    if (!column) return { path, contents: file.contents };
    const map = JSON.parse(file.text);
    map.mappings = remapColumns(map.mappings, column);
    return { path, contents: new TextEncoder().encode(JSON.stringify(map)) };
  });
}

/**
 * The static imports at the top of each module (esbuild writes a chunk's imports first, one
 * `import…from"./….js";` or `import"./….js";` each), by module path: `{ start, end, target, bare }`.
 */
function leadingImports(file) {
  const statement = /import(\{[^}"]*\}from)?"\.\/([\w$.-]+\.js)";/y;
  const imports = [];
  for (let match = statement.exec(file.text); match; match = statement.exec(file.text)) {
    const target = join(dirname(file.path), match[2]);
    imports.push({ start: match.index, end: statement.lastIndex, target, bare: !match[1] });
  }
  return imports;
}

/**
 * By module path, the imports `import"./chunk-….js";` of a chunk that an earlier import of the same
 * module already reaches (itself or through the chunks it imports): evaluated before the line is
 * read, which imports it again for nothing. None if the modules import one another in a cycle
 * (where a chunk an earlier import reaches may still be waiting for its own evaluation).
 */
function redundantImports(js) {
  const imports = new Map(js.map((file) => [file.path, leadingImports(file)]));
  const reach = new Map();
  const visiting = new Set();
  const reachOf = (path) => {
    if (reach.has(path)) return reach.get(path);
    if (visiting.has(path)) throw new Error("cycle");
    visiting.add(path);
    const all = new Set([path]);
    for (const { target } of imports.get(path) ?? []) for (const p of reachOf(target)) all.add(p);
    visiting.delete(path);
    reach.set(path, all);
    return all;
  };
  const dropped = new Map();
  try {
    for (const [path, list] of imports) {
      const evaluated = new Set();
      const drops = [];
      for (const i of list) {
        if (i.bare && evaluated.has(i.target)) drops.push(i);
        for (const p of reachOf(i.target)) evaluated.add(p);
      }
      if (drops.length > 0) dropped.set(path, drops);
    }
  } catch (err) {
    if (err.message === "cycle") return new Map();
    throw err;
  }
  return dropped;
}

/**
 * `text` with `edits` made (`{ start, end, text }`, none overlapping, none across a line break),
 * and `column(line, col)`: where a column of the old text is in the new one (a column inside a
 * replaced span: where its replacement starts).
 */
function applyEdits(text, edits) {
  edits.sort((a, b) => a.start - b.start);
  const lineStarts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1);
  const lineOf = (offset) => {
    let [lo, hi] = [0, lineStarts.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const byLine = new Map();
  let out = "";
  let at = 0;
  for (const edit of edits) {
    const line = lineOf(edit.start);
    if (edit.start < at || lineOf(edit.end) !== line) throw new Error("overlapping or multi-line edit");
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
    const col = edit.start - lineStarts[line];
    if (!byLine.has(line)) byLine.set(line, []);
    byLine.get(line).push({ col, end: col + (edit.end - edit.start), length: edit.text.length });
  }
  out += text.slice(at);
  const column = (line, col) => {
    let shift = 0;
    for (const e of byLine.get(line) ?? []) {
      if (e.end <= col) shift += e.end - e.col - e.length;
      else if (e.col < col) return e.col - shift;
      else break;
    }
    return col - shift;
  };
  return { text: out, column };
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = Object.fromEntries([...BASE64].map((c, i) => [c, i]));

/** A source map's `mappings` with each generated column moved by `column(line, col)`. */
function remapColumns(mappings, column) {
  return mappings
    .split(";")
    .map((segments, line) => {
      if (!segments) return segments;
      let [old, now] = [0, 0];
      return segments
        .split(",")
        .map((segment) => {
          const fields = decodeVlq(segment);
          old += fields[0];
          const moved = column(line, old);
          fields[0] = moved - now;
          now = moved;
          return fields.map(encodeVlq).join("");
        })
        .join(",");
    })
    .join(";");
}

function decodeVlq(segment) {
  const fields = [];
  let [value, shift] = [0, 0];
  for (const c of segment) {
    const digit = DIGIT[c];
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) shift += 5;
    else {
      fields.push(value % 2 ? -(value - 1) / 2 : value / 2);
      [value, shift] = [0, 0];
    }
  }
  return fields;
}

function encodeVlq(n) {
  let value = n < 0 ? -n * 2 + 1 : n * 2;
  let out = "";
  do {
    let digit = value % 32;
    value = Math.floor(value / 32);
    if (value > 0) digit |= 32;
    out += BASE64[digit];
  } while (value > 0);
  return out;
}

if (process.argv[1] && resolve(fileURLToPath(import.meta.url)) === resolve(process.argv[1])) {
  const target = process.argv[2];
  if (!target) {
    console.error("usage: node scripts/build.mjs <outdir, relative to the checkout>");
    process.exit(2);
  }
  await buildDocsAssets();
  await buildDocumentAsset();
  const meta = await buildWorker(target);
  const chunks = Object.keys(meta.outputs).filter((path) => path.endsWith(".js")).length;
  console.log(
    `scripts/build.mjs: ${relative(root, resolve(root, target))}: index.js and ${chunks - 1} chunks`,
  );
}
