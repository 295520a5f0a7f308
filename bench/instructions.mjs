// A new isolate's cost in CPU instructions, for bench/startup.mjs and bench/first-instructions.mjs:
// valgrind's callgrind counts what workerd executes (every thread: the Worker's Durable Objects and
// local D1 run in its process). Unlike a clock it does not see the machine's load; outside V8's
// garbage collector a count repeats to a fraction of a percent, while the collector's share moves
// by whole scavenges (~7–8 M), so "outside GC" is what says whether a change moved the code's cost.
//  - start: workerd loads the built modules (`wrangler deploy --dry-run --outdir`), compiles and
//    evaluates them, and exits (`workerd test`); `evaluate` is V8's Module::Evaluate, inclusive;
//  - first request: the Worker served as bench/lib.mjs serves it, counting switched on once it has
//    started and settled, one request (after `after`'s), counted until the process is quiet again;
//  - a cold request: the two together, what a new isolate's first caller waits for;
//  - `wrangler check startup`: its profile of the modules' evaluation, by the clock (load inflates it).
// Linux with valgrind only (`apt-get install valgrind`); a start or a request takes ~20–60 s.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import workerd from "workerd";
import * as lib from "./lib.mjs";

export const hasValgrind = () => spawnSync("valgrind", ["--version"], { stdio: "ignore" }).status === 0;
const KEEP = process.env.CALLGRIND_OUT;

/**
 * The Workers compared, by kind: `of` the snapshot (bench/lib.mjs), `read` and `write` their first
 * requests' paths (a read's path ends with the seeded project's id; a write creates a project).
 */
export const WORKERS = {
  empty: { name: "an empty Worker (the ladder's configuration)", of: "ladder" },
  api: {
    name: "this API, as deployed",
    api: true,
    split: true,
    read: "/v1/projects/",
    write: "/v1/projects",
  },
  io: { name: "I/O floor (bench/io)", vars: "ladder", read: "/projects/", write: "/projects" },
  ladder: { name: "ladder floor (bench/ladder)", read: "/floor/projects/", write: "/floor/projects" },
  minimal: { name: "minimal floor (bench/minimal)", read: "/projects/" },
  bundle: { name: "this API, one bundle (wrangler's, as npm run dev serves it)", api: true, of: "api" },
};
/** A Worker of WORKERS, to build (`more`: what it has besides). */
export const worker = (kind, more = {}) => ({ kind, ...WORKERS[kind], ...more });
const EMPTY = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {}
export default { fetch: () => new Response("{}") };`;

/**
 * Worker `w` (of WORKERS, with `kind`; `config` when already a snapshot) built as `wrangler deploy`
 * builds it: its wrangler.toml (`config`), the bundle `check startup` starts, the modules a start is
 * counted on, its upload's size (`kib`, `gzipKib`: wrangler's "Total Upload"), its `vars`.
 */
export async function build(w, vars) {
  if (!w.config) {
    w.config = lib.snapshot(w.kind, { of: w.of ?? w.kind });
    if (w.split) await lib.splitBuild(dirname(w.config));
  }
  const dir = dirname(w.config);
  if (w.kind === "empty") {
    writeFileSync(join(dir, "empty.js"), EMPTY);
    writeFileSync(w.config, readFileSync(w.config, "utf8").replace(/^main = .*$/m, 'main = "empty.js"'));
  }
  const deploy = (...argv) => lib.runWrangler(["deploy", "--dry-run", ...argv, "-c", w.config], dir);
  [w.bundle, w.modules] = [join(lib.tmp, `${w.kind}.bundle`), join(lib.tmp, `${w.kind}.modules`)];
  const built = deploy("--outfile", w.bundle);
  [, w.kib, w.gzipKib] = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(built).map(Number);
  deploy("--outdir", w.modules);
  w.vars = vars[w.vars ?? w.of ?? (w.api ? "api" : w.kind)];
  Object.assign(w, { startupMs: [], start: [], first: { read: [], write: [] } });
  return w;
}

/** `wrangler check startup` of `w`'s bundle: the profile's sampled time that is not (idle), in ms. */
export function checkStartup(w) {
  const profile = join(lib.tmp, "startup.cpuprofile");
  const argv = ["check", "startup", "--worker", w.bundle, "--outfile", profile, "-c", w.config];
  lib.runWrangler(argv, dirname(w.config));
  const { nodes, samples, timeDeltas, endTime, startTime } = JSON.parse(readFileSync(profile, "utf8"));
  const idle = new Set(nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let t = startTime;
  const at = timeDeltas.map((dt) => (t += dt));
  const busy = samples.reduce((sum, id, i) => sum + (idle.has(id) ? 0 : (at[i + 1] ?? endTime) - at[i]), 0);
  w.startupMs.push(busy / 1000);
}

/** V8's garbage collector, by the functions callgrind_annotate names (main thread and helpers). */
const GC =
  /Scaveng|Heap::|MarkCompact|Sweeper|Marking|GCTracer|heap::base|Evacuat|ExternalEntityTable|RememberedSet|SlotSet|MemoryAllocator|PagedSpace|NewSpace|SemiSpace|MutablePage|ArrayBufferSweeper|IterateBody/;
const LARGE = { encoding: "utf8", maxBuffer: 1 << 28 };
const annotate = (file, inclusive) =>
  execFileSync("callgrind_annotate", [`--inclusive=${inclusive}`, "--threshold=100", file], LARGE);

/** `{ all, gc }` instructions of a dump, in millions (each function's own, summed). */
function countsOf(file, name) {
  if (KEEP) {
    mkdirSync(KEEP, { recursive: true });
    cpSync(file, join(KEEP, `${name}.callgrind`));
  }
  let [all, gc] = [0, 0];
  for (const [, count, fn] of annotate(file, "no").matchAll(/^\s*([\d,]+) \([\s\d.]+%\)\s+(.*)$/gm)) {
    if (fn.includes("PROGRAM TOTALS")) continue;
    const n = Number(count.replaceAll(",", ""));
    all += n;
    if (GC.test(fn)) gc += n;
  }
  return { all: all / 1e6, gc: gc / 1e6 };
}

/** The instructions workerd executes to start `w` and exit: `{ all, gc, evaluate }`, in millions. */
export function countStart(w) {
  const dir = w.modules;
  const toml = readFileSync(w.config, "utf8");
  const main = /^main = "(?:.*\/)?(.*)\.[jt]s"$/m.exec(toml)[1];
  const date = /^compatibility_date = "(.*)"$/m.exec(toml)[1];
  const modules = readdirSync(dir).filter((f) => /\.m?js$/.test(f) && f !== "startup-entry.js");
  writeFileSync(
    join(dir, "startup-entry.js"),
    `import * as worker from ${JSON.stringify(`./${main}.js`)};
export default { async test() { if (!worker.default) throw new Error("no default export"); } };\n`,
  );
  const embed = (name) => `(name = ${JSON.stringify(name)}, esModule = embed ${JSON.stringify(name)})`;
  writeFileSync(
    join(dir, "startup.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = ( services = [ (name = "main", worker = .w) ] );
const w :Workerd.Worker = (
  modules = [ ${["startup-entry.js", ...modules].map(embed).join(", ")} ],
  compatibilityDate = ${JSON.stringify(date)},
);\n`,
  );
  // V8 writes the machine code it runs: valgrind must see it change (--smc-check).
  const valgrind = ["--tool=callgrind", "--callgrind-out-file=startup.callgrind", "--smc-check=all-non-file"];
  const argv = [...valgrind, workerd.default, "test", "--predictable", "startup.capnp"];
  const { stderr, status } = spawnSync("valgrind", argv, { cwd: dir, encoding: "utf8", stdio: "pipe" });
  if (status !== 0) throw new Error(`${w.kind} did not start under callgrind:\n${stderr}`);
  const file = join(dir, "startup.callgrind");
  const evaluate = /^\s*([\d,]+) .*v8::Module::Evaluate\(/m.exec(annotate(file, "yes"));
  if (!evaluate) throw new Error(`no module evaluation in the profile of ${w.kind}`);
  w.start.push({
    ...countsOf(file, `${w.kind}.start`),
    evaluate: Number(evaluate[1].replaceAll(",", "")) / 1e6,
  });
  return w.start.at(-1);
}

/** The script wrangler starts workerd with: callgrind, counting nothing until told. */
function underCallgrind(dir) {
  const file = join(dir, "workerd-under-callgrind.sh");
  const callgrind = ["--tool=callgrind", "--instr-atstart=no", "--smc-check=all-non-file"];
  callgrind.push(`--callgrind-out-file=${dir}/callgrind.%p`);
  writeFileSync(file, `#!/bin/sh\nexec valgrind ${callgrind.join(" ")} ${workerd.default} "$@"\n`);
  chmodSync(file, 0o755);
  // What lib.Server looks for: valgrind's tool runs under its own name.
  return { env: { MINIFLARE_WORKERD_PATH: file }, name: "callgrind-amd64" };
}
const control = (...argv) => execFileSync("callgrind_control", argv, { stdio: "ignore" });
const send = (server, r) =>
  server.request(r.method ?? "GET", r.path, { key: r.key, body: r.body?.(), allowRefusal: r.refused });

/**
 * One new process's first request `row` ({ config, vars, state, method, path, key, body?, after?,
 * refused? }), after `row.after`'s requests: `{ all, gc }`, in millions.
 */
export async function countFirst(name, row) {
  const dir = join(lib.tmp, `cg-${name}-${lib.hex(4)}`);
  mkdirSync(dir);
  const state = lib.copyState(row.state, `${name}-${lib.hex(4)}`);
  const server = await new lib.Server(name, row.config, state, row.vars, underCallgrind(dir)).start();
  try {
    const pid = server.pids.worker;
    for (const earlier of row.after ?? []) {
      await send(server, earlier);
      await server.quiet();
    }
    control("-i", "on", pid);
    control("-z", pid);
    await send(server, row);
    await server.quiet();
    control("-d", pid);
    const dumps = readdirSync(dir).filter((f) => f.startsWith(`callgrind.${pid}.`));
    if (dumps.length !== 1) throw new Error(`${name}: expected one dump, found ${dumps}`);
    return countsOf(join(dir, dumps[0]), name);
  } finally {
    await server.stop();
  }
}

/** `w`'s first read and first write as rows of countFirst, by the seed's two keys. */
export function firstRequests(w, seed, state) {
  const [reader, writer] = seed.bench.keys;
  const base = { config: w.config, vars: w.vars, state };
  const read = w.read && { ...base, method: "GET", path: w.read + seed.bench.project.id, key: reader };
  const body = () => ({ name: `f-${lib.hex(6)}` });
  const write = w.write && { ...base, method: "POST", path: w.write, key: writer, body };
  return { read, write };
}

/**
 * ROUNDS rounds, the order turned each: every Worker of `workers` started under `check startup`
 * and, in the first `counts` rounds, its start and first requests counted, then each of `rows`
 * (label → a row of countFirst). The first requests' keys: the read's never writes, so it has no
 * bookmark to start from, as the floors' reads have none.
 */
export async function coldRounds({ workers, rows = {}, seed, state, rounds, counts }) {
  const figures = Object.fromEntries(Object.keys(rows).map((label) => [label, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...workers].reverse() : workers;
    for (const w of order) {
      checkStartup(w);
      if (round >= counts) continue;
      const start = countStart(w);
      const firsts = firstRequests(w, seed, state);
      const requests = ["read", "write"].filter((k) => firsts[k]);
      for (const k of requests) w.first[k].push(await countFirst(`${w.kind}-${k}`, firsts[k]));
      const shown = requests.map((k) => `${k} ${outside(w.first[k].at(-1)).toFixed(1)}`);
      console.error(`bench: ${w.kind}: start ${outside(start).toFixed(1)} M outside GC, ${shown.join(", ")}`);
    }
    const labels = round >= counts ? [] : round % 2 ? Object.keys(rows).reverse() : Object.keys(rows);
    for (const label of labels) {
      figures[label].push(await countFirst(label.replace(/\W+/g, "_"), rows[label]));
      console.error(`bench: ${label}: ${outside(figures[label].at(-1)).toFixed(1)} M outside GC`);
    }
    const startups = workers.map((w) => w.startupMs.at(-1).toFixed(1));
    console.error(`bench: round ${round + 1}/${rounds}: check startup ${startups} ms`);
  }
  return figures;
}

const outside = ({ all, gc }) => all - gc;
const medianOf = (xs, f = outside) => (xs?.length ? lib.median(xs.map(f)) : Number.NaN);
const f1 = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "–");

/**
 * The cold table: each Worker's `check startup` ms, its start (beyond the empty Worker's), first
 * read and first write in M instructions outside GC, their sums, its upload's size, and each
 * Worker of `ratios` ([w, floor]…) over the floor (`check startup` paired by round).
 */
export function coldTable(workers, ratios) {
  const empty = workers.find((w) => w.kind === "empty");
  const beyond = (w, f) => medianOf(w.start, f) - (w === empty ? 0 : medianOf(empty.start, f));
  const figures = (w) => {
    const [start, read, write] = [beyond(w), medianOf(w.first.read), medianOf(w.first.write)];
    const evaluate = beyond(w, (s) => s.evaluate);
    return { start, evaluate, read, write, coldRead: start + read, coldWrite: start + write, kib: w.gzipKib };
  };
  const columns = ["start", "evaluate", "read", "write", "coldRead", "coldWrite", "kib"];
  const startup = (w) => `${f1(lib.median(w.startupMs))} (${f1(Math.min(...w.startupMs))})`;
  const rows = workers.map((w) => [w.name, startup(w), ...columns.map((c) => f1(figures(w)[c]))]);
  const name = (x) => x.name.split(" (")[0];
  for (const [w, floor] of ratios) {
    const [a, b, paired] = [figures(w), figures(floor), w.startupMs.map((x, i) => x / floor.startupMs[i])];
    const cells = columns.map((c) =>
      c.startsWith("cold") ? `**${f1(a[c] / b[c], 2)}**` : f1(a[c] / b[c], 2),
    );
    rows.push([`${name(w)} ÷ ${name(floor)}`, lib.spread(paired), ...cells]);
  }
  const head =
    "Worker | `check startup` ms, median (min) | start: M instructions | … evaluating modules | first read | " +
    "first write | **cold read** (start + read) | **cold write** | KiB gzip";
  return lib.table(head, rows);
}

/** Rows counted apart (label → [{ all, gc }…]): M instructions with GC and outside it. */
export const rowsTable = (figures) =>
  lib.table(
    ["a new isolate's first request", "M instructions, median (min–max)", "… outside GC"],
    Object.entries(figures).map(([label, xs]) => [
      label,
      ...[(x) => x.all, outside].map((f) => lib.spread(xs.map(f), 1)),
    ]),
  );

/**
 * A seeded state, `workers` built, their cold rounds (`rows(seed, state)`: rows counted beside
 * them), then the cold table, each API (`api`) over each floor and over BASE's, and the rows'.
 */
export async function coldRun({ command, workers, rows = () => ({}), rounds, counts }) {
  const { dir: state, seed } = lib.seededState({ keyCount: 4, deploymentCount: 1 });
  for (const w of workers) await build(w, lib.varsOf(seed));
  const figures = await coldRounds({ workers, rows: rows(seed, state), seed, state, rounds, counts });
  const of = (kind) => workers.find((w) => w.kind === kind);
  const ratios = workers
    .filter((w) => w.api)
    .flatMap((w) => ["ladder", "io", "minimal"].map((k) => [w, of(k)]));
  if (of("base")) ratios.push([of("api"), of("base")]);
  const report = lib.report(lib.header(command), coldTable(workers, ratios), rowsTable(figures));
  console.log(report);
  lib.saveResults("cold", { report, workers, rows: figures });
}
