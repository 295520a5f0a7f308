#!/usr/bin/env node
// What building one operation costs a new isolate (src/http/operations.ts `built`: its module
// evaluated, its zod schemas and route made), without the clock noise of a Worker process: the API
// bundled as wrangler bundles it (esbuild, one file, minified, the zod alias, workerd's conditions:
// the same `__esm` wrapping of every lazily imported module), with an entry that exports the app
// shell and the operation table; then, in a new Node process per figure (V8, as workerd), the app
// shell built and one operation's `built` timed:
//   - first: the operation is the process's first (what a new isolate's first request builds:
//     zod's and the shared components' first use, then the operation's own modules);
//   - then: the operation built after `GET /v1/api-keys/current` (what that one did not build:
//     its own modules, and any first use of zod's code that one did not make; so it moves when
//     what that operation builds changes, and `first` is the figure to compare).
// ROUNDS (3) rounds, the operations in a new order each; medians. ONLY=<regexp>: the operations
// (`get /v1/projects/{project_id}`) it matches. With BASE=<commit>, that commit's
// src/ too (a git worktree), every figure of both taken in turn, and each operation's ratio.
//
//   node bench/operation-builds.mjs            BASE=HEAD~1 node bench/operation-builds.mjs
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { asWranglerBuilds } from "../scripts/build.mjs";
import * as lib from "./lib.mjs";

const ROUNDS = lib.env("ROUNDS", 3);
const WARM = "get /v1/api-keys/current";

/** The API of `root` (a checkout) bundled as wrangler.toml has wrangler bundle it. */
async function bundle(root, name) {
  const dir = join(lib.tmp, name);
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    [
      `export { createApp } from ${JSON.stringify(join(root, "src/app.ts"))};`,
      `export { OPERATIONS } from ${JSON.stringify(join(root, "src/routes/index.ts"))};`,
      `export { built } from ${JSON.stringify(join(root, "src/http/operations.ts"))};`,
    ].join("\n"),
  );
  const outfile = join(dir, "bundle.mjs");
  await esbuild.build({ ...asWranglerBuilds(root), entryPoints: [entry], outfile });
  return outfile;
}

const PROBE = `
const [file, warm, op] = process.argv.slice(1);
const m = await import(file);
m.createApp();
const find = (w) => m.OPERATIONS.find((o) => o.method + " " + o.path === w);
if (warm) await m.built(find(warm));
const t = performance.now();
await m.built(find(op));
console.log(performance.now() - t);`;

const probe = (file, warm, op) =>
  Number(
    execFileSync(process.execPath, ["--input-type=module", "-e", PROBE, file, warm, op], {
      encoding: "utf8",
    }),
  );

async function main() {
  const trees = [{ name: "this tree", root: lib.root }];
  if (process.env.BASE) {
    const root = join(lib.tmp, "base");
    execFileSync("git", ["worktree", "add", "--detach", root, process.env.BASE], {
      cwd: lib.root,
      stdio: "ignore",
    });
    // Its zod alias reaches into node_modules by a relative path, as the API's does.
    symlinkSync(join(lib.root, "node_modules"), join(root, "node_modules"));
    trees.push({ name: `BASE ${process.env.BASE}`, root });
  }
  try {
    for (const t of trees) t.file = await bundle(t.root, t.name.replace(/\W+/g, "-"));
    const only = new RegExp(process.env.ONLY ?? "");
    const ops = await import(trees[0].file).then((m) =>
      m.OPERATIONS.map((o) => `${o.method} ${o.path}`).filter((op) => only.test(op)),
    );
    for (const t of trees) t.figures = Object.fromEntries(ops.map((op) => [op, { first: [], after: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = ops.map((_, i) => ops[(i + round * 37) % ops.length]);
      if (round % 2) order.reverse();
      for (const op of order)
        for (const t of round % 2 ? [...trees].reverse() : trees) {
          if (!t.figures[op]) continue;
          t.figures[op].first.push(probe(t.file, "", op));
          t.figures[op].after.push(probe(t.file, WARM, op));
        }
      console.error(`bench: round ${round + 1}/${ROUNDS}`);
    }
    console.log(
      lib.header(
        `node bench/operation-builds.mjs (ROUNDS=${ROUNDS}${process.env.BASE ? `, BASE=${process.env.BASE}` : ""})`,
      ),
    );
    const f = (x) => x.toFixed(2);
    const summary = trees.map((t) => {
      const firsts = ops.map((op) => lib.median(t.figures[op]?.first ?? [NaN]));
      const thens = ops.map((op) => lib.median(t.figures[op]?.after ?? [NaN]));
      return [
        t.name,
        f(lib.median(firsts)),
        f(Math.max(...firsts)),
        f(lib.median(thens)),
        f(Math.max(...thens)),
      ];
    });
    console.log(
      lib.table(
        ["src", "first build, ms: median of the operations", "max", `built after \`${WARM}\`: median`, "max"],
        summary,
      ),
    );
    const rows = ops
      .map((op) => {
        const [a, b] = trees.map((t) => t.figures[op]);
        const cells = [op, f(lib.median(a.first)), f(lib.median(a.after))];
        if (b)
          cells.push(
            f(lib.median(b.first)),
            f(lib.median(b.after)),
            f(lib.median(a.first) / lib.median(b.first)),
          );
        return cells;
      })
      .sort((x, y) => Number(y[1]) - Number(x[1]));
    const head = ["operation", "first, ms", "then, ms"];
    if (trees[1]) head.push("BASE first", "BASE then", "first ÷ BASE");
    console.log(`\n${lib.table(head, rows)}`);
    lib.saveResults(
      "operation-builds",
      trees.map(({ name, figures }) => ({ name, figures })),
    );
  } finally {
    if (trees[1]) execFileSync("git", ["worktree", "remove", "--force", trees[1].root], { cwd: lib.root });
  }
}

await main();
process.exit(0);
