#!/usr/bin/env node
// `npm run bench:startup`: the API's Worker beside the floor Worker (bench/ladder: hono +
// @hono/zod-openapi, one route with its zod schemas, /openapi.json, and the ladder's plain rungs) —
// how long each takes to start, its bundle, and a new isolate's first request beside warm ones, for
// a read and a write. ROUNDS (5) interleaved rounds, the Workers' order turned every round.
//
//  1. each Worker built once as `wrangler deploy` builds it (`--dry-run --outfile`): the gzip size
//     wrangler reports ("Total Upload: … / gzip: …");
//  2. startup, every round: `wrangler check startup --worker <that build>`, wrangler's own profiler of
//     a Worker's start (it imports the Worker's module inside a fetch in a new miniflare, under V8's
//     CPU profiler): the profile's sampled time that is not (idle), in ms. V8 samples by the clock,
//     so a loaded machine inflates it: the minimum is the steadier figure;
//  3. first request, every round, per Worker and per request (a read, a write): a new process
//     (bench/start-worker.mjs, inspector off) left until quiet — its CPU until then is "process start"
//     (workerd's own start, the same for both, and the Worker's modules, which workerd evaluates as the
//     process starts) — then one request, then WARM (20) more one at a time: the client's latency and
//     the Worker process's CPU over each (/proc/<pid>/task/*/schedstat). The first is a new isolate's
//     first request, after its startup (2); the first request of the dev proxy in front, too.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as lib from "./lib.mjs";

const { median, pairedRatio, tmp } = lib;
const [ROUNDS, WARM] = [lib.env("ROUNDS", 5), lib.env("WARM", 20)];
const WORKERS = [
  { name: "floor Worker (bench/ladder)", kind: "ladder", read: "/floor/projects/", write: "/write/project" },
  { name: "this API", kind: "api", read: "/v1/projects/", write: "/v1/projects" },
];
const KINDS = ["read", "write"];

async function main() {
  const { dir, seed } = lib.seededState({ keyCount: 4, deploymentCount: 1, deep: false });
  const [key, project] = [seed.bench.keys[0], seed.bench.project.id];
  for (const w of WORKERS) {
    const [config, bundle] = [lib.snapshot(w.kind), join(tmp, `${w.kind}.bundle`)];
    const built = lib.runWrangler(
      ["deploy", "--dry-run", "--outfile", bundle, "-c", config],
      dirname(config),
    );
    [, w.kib, w.gzipKib] = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(built).map(Number);
    const vars =
      w.kind === "api"
        ? { RATE_LIMITS: lib.RATE_LIMITS }
        : { ORG_ID: seed.bench.org, ACCOUNT_ID: seed.bench.owner };
    Object.assign(w, { config, bundle, vars, state: lib.copyState(dir, w.kind), startup: [], process: [] });
    for (const kind of KINDS) w[kind] = { path: w[kind], first: [], warm: [] };
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...WORKERS].reverse() : WORKERS;
    for (const w of order) {
      const [profile, cwd] = [join(tmp, "startup.cpuprofile"), dirname(w.config)];
      lib.runWrangler(["check", "startup", "--worker", w.bundle, "--outfile", profile, "-c", w.config], cwd);
      w.startup.push(busyMs(JSON.parse(readFileSync(profile, "utf8"))));
    }
    for (const kind of KINDS) {
      for (const w of order) {
        const server = await lib.Server.start(w.kind, w.kind, w.config, w.state, w.vars);
        w.process.push(server.startCpuMs);
        const once = async () => {
          const body = kind === "write" ? { name: `s-${randomBytes(6).toString("hex")}` } : undefined;
          const before = server.cpuNs();
          const { ms } = await server.request(body ? "POST" : "GET", w[kind].path + (body ? "" : project), {
            key,
            body,
          });
          return { ms, cpuMs: (server.cpuNs() - before) / 1e6 };
        };
        w[kind].first.push(await once());
        const warm = [];
        for (let i = 0; i < WARM; i++) warm.push(await once());
        w[kind].warm.push({ ms: median(warm.map((x) => x.ms)), cpuMs: median(warm.map((x) => x.cpuMs)) });
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

function format() {
  const [floor, api] = WORKERS;
  const f = (x, d = 1) => x.toFixed(d);
  const pair = (when, d) => (w, k) =>
    `${f(median(w[k][when].map((x) => x.ms)), d)} / ${f(median(w[k][when].map((x) => x.cpuMs)), d)}`;
  const cells = (w) => [
    `${f(median(w.startup))} (${f(Math.min(...w.startup))})`,
    f(median(w.process)),
    `${f(w.gzipKib)} (${f(w.kib, 0)} raw)`,
    ...KINDS.flatMap((k) => [pair("first")(w, k), pair("warm", 2)(w, k)]),
  ];
  const ratio = (k, when) =>
    ["ms", "cpuMs"]
      .map((x) => f(pairedRatio(...[api, floor].map((w) => w[k][when].map((y) => y[x]))), 2))
      .join(" / ");
  const startup = median(api.startup) / median(floor.startup);
  const heads = [
    "wrangler check startup ms, median (min)",
    "process start CPU ms",
    "bundle KiB gzip",
    "first read: ms / CPU ms",
    "warm read",
    "first write",
    "warm write",
  ];
  const ratios = [
    `${f(startup, 2)} (${f(Math.min(...api.startup) / Math.min(...floor.startup), 2)})`,
    f(median(api.process) / median(floor.process), 2),
    f(api.gzipKib / floor.gzipKib, 2),
  ];
  return [
    lib.header(
      `npm run bench:startup · ${ROUNDS} interleaved rounds · a first request, then ${WARM} warm ones, in a new process each`,
    ),
    "",
    lib.table(
      ["Worker", ...heads],
      [
        [floor.name, ...cells(floor)],
        [api.name, ...cells(api)],
        [
          "API ÷ floor (medians; per-request columns paired by round)",
          ...ratios,
          ...KINDS.flatMap((k) => [ratio(k, "first"), ratio(k, "warm")]),
        ],
      ],
    ),
    "",
    `Issue #46's goals: startup ≤ 1.5× the floor's (now ${f(startup, 2)}×), bundle ≤ 200 KiB gzip (now ${f(api.gzipKib)} KiB).`,
  ].join("\n");
}

lib.runMain(30, main);
