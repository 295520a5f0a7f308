#!/usr/bin/env node
// `npm run bench:startup`: the API's Worker as it deploys (wrangler.toml `[env.*]`: scripts/build.mjs's
// code-split build, bench/split-build.mjs) and, unless BUNDLE=0, as wrangler bundles it for `npm run
// dev`, beside two floors — the ladder floor (bench/ladder:
// hono + @hono/zod-openapi, one route with its zod schemas, /openapi.json, and the ladder's plain
// rungs with their bindings, built with wrangler's defaults) and the minimal floor (bench/minimal:
// that route and /openapi.json only, no binding, built as the API is built) — and an empty Worker of
// the ladder's configuration (what any Worker's start costs here): how long each takes to start, its
// bundle, and a new isolate's first request beside warm ones, for a read and a write (the minimal
// floor has one request: its route, no I/O). ROUNDS (9) interleaved rounds, the Workers' order
// turned every round.
//
//  1. each Worker built once as `wrangler deploy` builds it (`--dry-run --outfile`, and `--outdir` for
//     its modules): the gzip size wrangler reports ("Total Upload: … / gzip: …"), and, where valgrind
//     is installed (INSTRUCTIONS=0 to skip), the CPU instructions workerd executes to load it and exit,
//     and the part of them that evaluates its modules, counted by callgrind (bench/instructions.mjs):
//     not a clock, so the machine's load does not move them; beyond the empty Worker's count;
//  2. startup, every round: `wrangler check startup --worker <that build>`, wrangler's own profiler of
//     a Worker's start (it imports the Worker's module inside a fetch in a new miniflare, under V8's
//     CPU profiler): the profile's sampled time that is not (idle), in ms. What it samples is the
//     modules' evaluation (they are compiled before); V8 samples by the clock, so a loaded machine
//     inflates it: the minimum is the steadier figure;
//  3. every round, for the floors and the API, per request (a read, a write): a new process
//     (bench/start-worker.mjs, inspector off), left until quiet, then one request and WARM (20) more
//     one at a time: the client's latency and the Worker process's CPU over each
//     (/proc/<pid>/task/*/schedstat). The first is a new isolate's first request: the runtime starts
//     the Worker's isolate on it (its CPU until it listens no longer includes the modules), and the
//     dev proxy in front serves its own first request too (the same for both). The API's read and
//     write are made by two keys of one account: the read's never writes, so it has no bookmark to
//     start from, as the floors' reads have none.
// ROUNDS=0: the builds and instruction counts only.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { hasValgrind, startInstructions } from "./instructions.mjs";
import * as lib from "./lib.mjs";
import { splitBuild } from "./split-build.mjs";

const { median, tmp } = lib;
const [ROUNDS, WARM] = [lib.env("ROUNDS", 9), lib.env("WARM", 20)];
const INSTRUCTIONS = lib.env("INSTRUCTIONS", 1) === 1 && hasValgrind();
const API = { read: "/v1/projects/", write: "/v1/projects", of: "api" };
const WORKERS = [
  { name: "an empty Worker (the ladder's configuration)", kind: "empty", of: "ladder" },
  { name: "ladder floor (bench/ladder)", kind: "ladder", read: "/floor/projects/", write: "/write/project" },
  { name: "minimal floor (bench/minimal)", kind: "minimal", read: "/projects/" },
  { name: "this API (as deployed: scripts/build.mjs, code-split)", kind: "split", ...API },
  ...(lib.env("BUNDLE", 1) === 1
    ? [{ name: "this API, one bundle (wrangler's, as npm run dev serves it)", kind: "api", ...API }]
    : []),
];
const KINDS = ["read", "write"];
const EMPTY = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {}
export default { fetch: () => new Response("{}") };`;

async function main() {
  const { dir, seed } = lib.seededState({ keyCount: 4, deploymentCount: 1, deep: false });
  // Two keys: the read's never writes, so its read starts on the nearest replica as the floors'
  // does (a key that has written starts from its bookmark: bench/first-requests.mjs measures that).
  const [project, vars] = [seed.bench.project.id, lib.varsOf(seed)];
  const keyOf = { read: seed.bench.keys[0], write: seed.bench.keys[1] };
  for (const w of WORKERS) {
    const [config, bundle] = [lib.snapshot(w.kind, { of: w.of }), join(tmp, `${w.kind}.bundle`)];
    if (w.kind === "split") await splitBuild(dirname(config));
    if (w.kind === "empty") {
      writeFileSync(join(dirname(config), "empty.js"), EMPTY);
      writeFileSync(config, readFileSync(config, "utf8").replace(/^main = .*$/m, 'main = "empty.js"'));
    }
    const deploy = (...argv) =>
      lib.runWrangler(["deploy", "--dry-run", ...argv, "-c", config], dirname(config));
    const built = deploy("--outfile", bundle);
    [, w.kib, w.gzipKib] = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(built).map(Number);
    if (INSTRUCTIONS) {
      const modules = join(tmp, `${w.kind}.modules`);
      deploy("--outdir", modules);
      const toml = readFileSync(config, "utf8");
      const main = /^main = "(.*)\.[jt]s"$/m.exec(toml)[1].split("/").pop();
      const date = /^compatibility_date = "(.*)"$/m.exec(toml)[1];
      w.instructions = startInstructions(modules, `${main}.js`, date);
      const [total, evaluate] = [w.instructions.total, w.instructions.evaluate].map(millions);
      console.error(
        `bench: ${w.kind}: ${total} M instructions to start, ${evaluate} M evaluating its modules`,
      );
    }
    Object.assign(w, {
      config,
      bundle,
      vars: vars[w.of ?? w.kind],
      state: lib.copyState(dir, w.kind),
      startup: [],
    });
    for (const kind of KINDS) w[kind] = w[kind] && { path: w[kind], first: [], warm: [] };
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...WORKERS].reverse() : WORKERS;
    for (const w of order) {
      const [profile, cwd] = [join(tmp, "startup.cpuprofile"), dirname(w.config)];
      lib.runWrangler(["check", "startup", "--worker", w.bundle, "--outfile", profile, "-c", w.config], cwd);
      w.startup.push(busyMs(JSON.parse(readFileSync(profile, "utf8"))));
    }
    for (const kind of KINDS) {
      for (const w of order.filter((x) => x[kind])) {
        const server = await new lib.Server(w.kind, w.config, w.state, w.vars).start();
        const once = async () => {
          const body = kind === "write" ? { name: `s-${lib.hex(6)}` } : undefined;
          const before = server.cpuNs();
          const path = w[kind].path + (body ? "" : project);
          const { ms } = await server.request(body ? "POST" : "GET", path, { key: keyOf[kind], body });
          return { ms, cpuMs: (server.cpuNs() - before) / 1e6 };
        };
        const warm = [];
        for (let i = 0; i <= WARM; i++) warm.push(await once());
        w[kind].first.push(warm.shift());
        w[kind].warm.push(medians(warm));
        await server.stop();
      }
    }
    console.error(
      `bench: round ${round + 1}/${ROUNDS}: startup ${WORKERS.map((w) => w.startup.at(-1).toFixed(1))} ms`,
    );
  }
  const report = format();
  console.log(report);
  lib.saveResults("startup", { report, workers: WORKERS });
}

/** A V8 CPU profile's sampled time not spent (idle), in ms: each sample holds until the next. */
function busyMs({ nodes, samples, timeDeltas, endTime, startTime }) {
  const idle = new Set(nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let t = startTime;
  const at = timeDeltas.map((dt) => (t += dt));
  return samples.reduce((sum, id, i) => sum + (idle.has(id) ? 0 : (at[i + 1] ?? endTime) - at[i]), 0) / 1000;
}

/** The median latency and the median CPU of `xs` ({ ms, cpuMs }…). */
const medians = (xs) => ({ ms: median(xs.map((x) => x.ms)), cpuMs: median(xs.map((x) => x.cpuMs)) });
const millions = (x) => (x / 1e6).toFixed(1);

function format() {
  const [empty, ladder, minimal, ...apis] = WORKERS;
  const [api, floors] = [apis[0], [ladder, minimal]];
  const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "–");
  const short = (w) => w.name.split(" (")[0];
  // Instructions: the empty Worker's, the others' beyond it (what their own modules cost to compile and run).
  const beyond = (part) => (w) =>
    (w.instructions?.[part] - (w === empty ? 0 : empty.instructions?.[part])) / 1e6;
  const [total, evaluate] = [beyond("total"), beyond("evaluate")];
  const [startupMedian, startupMin] = [(w) => median(w.startup), (w) => Math.min(...w.startup)];
  const ratio = (w, floor) => (g) => f(g(w) / g(floor), 2);
  /** The ratios of two series paired by round: median (min–max). */
  const pairedSpread = (xs, ys) => lib.spread(xs.map((x, i) => x / ys[i]));
  const startupCells = (w) => [`${f(startupMedian(w))} (${f(startupMin(w))})`, f(total(w)), f(evaluate(w))];
  const both = ({ ms, cpuMs }, d) => `${f(ms, d)} / ${f(cpuMs, d)}`;
  const requestCells = (w) =>
    KINDS.flatMap((k) => (w[k] ? [both(medians(w[k].first)), both(medians(w[k].warm), 2)] : ["–", "–"]));
  // The minimal floor's one request stands for both of the API's kinds.
  const paired = (w, floor, k, when) => {
    const of = floor[k] ?? floor.read;
    const byRound = (x) => pairedSpread(...[w[k], of].map((y) => y[when].map((z) => z[x])));
    return `${byRound("ms")} / ${byRound("cpuMs")}`;
  };
  const startupHead = [
    "Worker",
    "wrangler check startup ms, median (min); ratios paired by round, (min–max)",
  ];
  startupHead.push("M instructions to start, beyond the empty Worker's", "… of which evaluating the modules");
  const requestHead = ["a new process's first request, then warm ones: ms / Worker CPU ms", "first read"];
  requestHead.push(`warm read (median of ${WARM})`, "first write", "warm write");
  const startupRatios = (w, floor) => {
    const r = ratio(w, floor);
    return [pairedSpread(w.startup, floor.startup), r(total), r(evaluate), r((x) => x.gzipKib)];
  };
  const pairs = apis.flatMap((w) => floors.map((floor) => [w, floor]));
  const [readMinimal, writeMinimal] = KINDS.map((k) => paired(api, minimal, k, "first"));
  const [readLadder, writeLadder] = KINDS.map((k) => paired(api, ladder, k, "first"));
  return lib.report(
    lib.header(`npm run bench:startup · ${ROUNDS} interleaved rounds · every start a new process`),
    lib.table(
      [...startupHead, "bundle KiB gzip"],
      [
        ...WORKERS.map((w) => [w.name, ...startupCells(w), `${f(w.gzipKib)} (${f(w.kib)} raw)`]),
        ...pairs.map(([w, floor]) => [`${short(w)} ÷ ${short(floor)}`, ...startupRatios(w, floor)]),
      ],
    ),
    ROUNDS > 0 &&
      lib.table(requestHead, [
        ...[...floors, ...apis].map((w) => [w.name, ...requestCells(w)]),
        ...pairs.map(([w, floor]) => [
          `${short(w)} ÷ ${short(floor)}, paired by round`,
          ...KINDS.flatMap((k) => [paired(w, floor, k, "first"), paired(w, floor, k, "warm")]),
        ]),
      ]),
    `Issue #62's goals: startup ≤ 1.3× the minimal floor's (now ${pairedSpread(api.startup, minimal.startup)}× by wrangler check startup, paired by round, ${ratio(api, minimal)(evaluate)}× by the instructions evaluating the modules, ${ratio(api, minimal)(total)}× by all beyond an empty Worker's); a new isolate's first request ≤ 1.3× the floor's for a read, ≤ 1.5× for a write (ms / CPU: read ${readLadder} the ladder floor's, ${readMinimal} the minimal floor's; write ${writeLadder}, ${writeMinimal}); bundle ${f(api.gzipKib)} KiB gzip (≤ 200, issue #46).`,
  );
}

lib.runMain(30, main);
