#!/usr/bin/env node
// A new isolate's first request counted in CPU instructions instead of timed: the Worker's workerd
// runs under valgrind's callgrind with instrumentation off (`--instr-atstart=no`) while it starts
// and settles; then counting is switched on (`callgrind_control -i on`), one request is sent, and
// the count is dumped once the process is quiet again (the request and what it leaves running:
// waitUntil work, the limiter's settle). Every thread of the process counts: its Durable Objects
// and local D1 run in it. A clock on this shared machine spreads a first request's CPU by ±30 %;
// the count does not see the load, and outside the garbage collector it repeats to within a
// fraction of a percent. The collector's share moves by whole scavenges (~7–8 M each) with where
// its young generation happens to fill, so it is shown apart: `outside GC` is the figure that
// says whether a change moved the code's own cost, `all` what a first request pays.
//
//   node bench/first-instructions.mjs    # ROUNDS (3); BASE=<commit> pairs with that build;
//                                        # ONLY=<regexp> picks rows; DECOMPOSE=1 adds the rows below;
//                                        # CALLGRIND_OUT=<dir> keeps each dump (callgrind_annotate)
//
// Rows: the API as it deploys (bench/split-build.mjs): `GET /v1/projects/{id}` by a key that never
// writes and `POST /v1/projects` by another, as bench:startup's first requests are; the ladder's
// floor read, its write rung and its floor write. DECOMPOSE=1: the API's first `/healthz` (the app
// shell: no key, no limiter, no D1), a first `/v1` request without a key (its 401 counted in the
// anonymous window), a first `GET /v1/api-keys/current` (authentication, the limiter, the
// middleware, an operation: what any first request pays), then the read and the write as a
// process's second request, after it (what building the operation adds), and a write after two. Linux with valgrind only; a row takes
// about 20 s.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import workerd from "workerd";
import { hasValgrind } from "./instructions.mjs";
import * as lib from "./lib.mjs";
import { splitBuild, withBaseBuild } from "./split-build.mjs";

const ROUNDS = lib.env("ROUNDS", 3);
const BASE = process.env.BASE;
const ONLY = new RegExp(process.env.ONLY ?? "");
const KEEP = process.env.CALLGRIND_OUT;

/** The script wrangler starts workerd with: callgrind, counting nothing until told. */
function underCallgrind(dir) {
  const file = join(dir, "workerd-under-callgrind.sh");
  const callgrind = [
    "--tool=callgrind",
    "--instr-atstart=no",
    // V8 writes the machine code it runs: valgrind must see it change.
    "--smc-check=all-non-file",
    `--callgrind-out-file=${dir}/callgrind.%p`,
  ];
  writeFileSync(file, `#!/bin/sh\nexec valgrind ${callgrind.join(" ")} ${workerd.default} "$@"\n`);
  chmodSync(file, 0o755);
  // What lib.Server looks for: valgrind's tool runs under its own name.
  return { env: { MINIFLARE_WORKERD_PATH: file }, name: "callgrind-amd64" };
}

const control = (...argv) => execFileSync("callgrind_control", argv, { stdio: "ignore" });

/** V8's garbage collector, by the functions callgrind_annotate names (main thread and helpers). */
const GC =
  /Scaveng|Heap::|MarkCompact|Sweeper|Marking|GCTracer|heap::base|Evacuat|ExternalEntityTable|RememberedSet|SlotSet|MemoryAllocator|PagedSpace|NewSpace|SemiSpace|MutablePage|ArrayBufferSweeper|IterateBody/;

/** `{ all, gc }` instructions of a dump, in millions. */
function countsOf(file) {
  const annotated = execFileSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", file], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  let [all, gc] = [0, 0];
  for (const [, count, fn] of annotated.matchAll(/^\s*([\d,]+) \([\s\d.]+%\)\s+(.*)$/gm)) {
    if (fn.includes("PROGRAM TOTALS")) continue;
    const n = Number(count.replaceAll(",", ""));
    all += n;
    if (GC.test(fn)) gc += n;
  }
  return { all: all / 1e6, gc: gc / 1e6 };
}

/** One new process's first request (after `request.after`, each in turn): `{ all, gc }`. */
async function counted(name, row) {
  const dir = join(lib.tmp, `cg-${name}-${lib.hex(4)}`);
  mkdirSync(dir);
  const state = lib.copyState(row.state, `${name}-${lib.hex(4)}`);
  const server = await new lib.Server(name, row.config, state, row.vars, underCallgrind(dir)).start();
  try {
    const pid = server.pids.worker;
    for (const earlier of row.after ?? []) {
      await server.request(earlier.method ?? "GET", earlier.path, {
        key: earlier.key,
        body: earlier.body?.(),
      });
      await server.quiet();
    }
    control("-i", "on", pid);
    control("-z", pid);
    await server.request(row.method, row.path, {
      key: row.key,
      body: row.body?.(),
      allowRefusal: row.refused,
    });
    await server.quiet();
    control("-d", pid);
    const dumps = readdirSync(dir).filter((f) => f.startsWith(`callgrind.${pid}.`));
    if (dumps.length !== 1) throw new Error(`${name}: expected one dump, found ${dumps}`);
    const dump = join(dir, dumps[0]);
    if (KEEP) {
      mkdirSync(KEEP, { recursive: true });
      cpSync(dump, join(KEEP, `${name}.${dumps[0]}`));
    }
    return countsOf(dump);
  } finally {
    await server.stop();
  }
}

/** The rows, by label. */
function rowsOf(configs, seed, state) {
  const vars = lib.varsOf(seed);
  const [reader, writer] = seed.bench.keys;
  const project = `/v1/projects/${seed.bench.project.id}`;
  const created = () => ({ name: `f-${lib.hex(6)}` });
  const ladder = { config: lib.snapshot("ladder"), vars: vars.ladder, state };
  const read = { method: "GET", path: project, key: reader };
  const write = { method: "POST", path: "/v1/projects", key: writer, body: created };
  const current = (key) => ({ path: "/v1/api-keys/current", key });
  const rows = {};
  const builds = [["this tree", configs.this], ...(configs.base ? [[`BASE ${BASE}`, configs.base]] : [])];
  for (const [label, config] of builds) {
    const api = { config, vars: vars.api, state };
    rows[`${label}: GET /v1/projects/{id}`] = { ...api, ...read };
    rows[`${label}: POST /v1/projects`] = { ...api, ...write };
    if (process.env.DECOMPOSE) {
      rows[`${label}: GET /healthz (no key, no limiter, no D1)`] = {
        ...api,
        method: "GET",
        path: "/healthz",
      };
      rows[`${label}: GET /v1/projects without a key (401)`] = {
        ...api,
        method: "GET",
        path: "/v1/projects",
        refused: true,
      };
      rows[`${label}: GET /v1/api-keys/current`] = { ...api, ...current(reader), method: "GET" };
      rows[`${label}: the read, after it`] = { ...api, ...read, after: [current(reader)] };
      rows[`${label}: the write, after it`] = { ...api, ...write, after: [current(writer)] };
      rows[`${label}: a write after two`] = { ...api, ...write, after: [write, write] };
    }
  }
  rows["ladder floor read"] = { ...ladder, ...read, path: `/floor/projects/${seed.bench.project.id}` };
  rows["ladder write rung"] = { ...ladder, ...write, path: "/write/project" };
  rows["ladder floor write"] = { ...ladder, ...write, path: "/floor/projects" };
  return Object.fromEntries(Object.entries(rows).filter(([label]) => ONLY.test(label)));
}

async function run(configs) {
  const { dir, seed } = lib.seededState({ keyCount: 4, deploymentCount: 1, deep: false });
  const rows = rowsOf(configs, seed, dir);
  const labels = Object.keys(rows);
  const figures = Object.fromEntries(labels.map((label) => [label, { all: [], outside: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const label of round % 2 ? [...labels].reverse() : labels) {
      const { all, gc } = await counted(label.replace(/\W+/g, "_"), rows[label]);
      figures[label].all.push(all);
      figures[label].outside.push(all - gc);
      console.error(`bench: ${label}: ${all.toFixed(1)} M, ${(all - gc).toFixed(1)} M outside GC`);
    }
    console.error(`bench: round ${round + 1}/${ROUNDS}`);
  }
  const m = (label, which) => lib.median(figures[label][which]);
  const ratio = (a, b) =>
    figures[a] && figures[b]
      ? [[`${a} ÷ ${b}`, ...["all", "outside"].map((w) => `${(m(a, w) / m(b, w)).toFixed(2)}×`)]]
      : [];
  const table = labels.map((label) => [
    label,
    ...["all", "outside"].map((w) => lib.spread(figures[label][w], 1)),
  ]);
  for (const label of ["this tree", `BASE ${BASE}`]) {
    table.push(...ratio(`${label}: GET /v1/projects/{id}`, "ladder floor read"));
    table.push(...ratio(`${label}: POST /v1/projects`, "ladder write rung"));
    table.push(...ratio(`${label}: POST /v1/projects`, "ladder floor write"));
  }
  table.push(...ratio("this tree: GET /v1/projects/{id}", `BASE ${BASE}: GET /v1/projects/{id}`));
  table.push(...ratio("this tree: POST /v1/projects", `BASE ${BASE}: POST /v1/projects`));
  const command = `${BASE ? `BASE=${BASE} ` : ""}ROUNDS=${ROUNDS} node bench/first-instructions.mjs`;
  console.log(lib.header(command));
  console.log(
    lib.table(
      [
        "a new isolate's first request",
        "M instructions, median (min–max)",
        "… outside the garbage collector",
      ],
      table,
    ),
  );
}

async function main() {
  if (!hasValgrind()) throw new Error("valgrind is not installed (apt-get install valgrind)");
  if (BASE) await withBaseBuild(BASE, run);
  else await run({ this: await splitBuild(dirname(lib.snapshot("api", {}))) });
}

lib.runMain(90, main);
