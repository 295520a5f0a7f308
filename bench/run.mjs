#!/usr/bin/env node
// `npm run bench`: the scenarios of bench/scenarios.mjs — the ladder's rungs, the API's routes, deep
// pages, webhook fan-out — in one interleaved run on this machine, then memory under load. See
// bench/README.md for what each figure is.
//
//   node bench/run.mjs [--only=<regexp>]   (the scenarios whose name matches, and the rungs they are
//                                           divided by; without it, every scenario but `only` ones)
//   env: ROUNDS (5) SLICE (s, 3) CONNECTIONS (10) KEYS_PER_TARGET (20) MEMORY_SECONDS (60; 0 = none)
//        SETTLE_SECONDS (62) DEPLOYMENTS (20,000) DEPTH_SAMPLES (100) FANOUT (50) VOLUME (1,000)
//        DEPLOYED (0; 1: the API as it deploys, not wrangler's one bundle)
//
// How it measures (one seeded state, a new process per server per round, the Worker process's CPU
// around each slice): bench/METHOD.md.
import { dirname } from "node:path";
import * as lib from "./lib.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const { env, spread } = lib;
const [ROUNDS, SLICE, CONNECTIONS] = [env("ROUNDS", 5), env("SLICE", 3), env("CONNECTIONS", 10)];
const [KEYS, MEMORY_SECONDS] = [env("KEYS_PER_TARGET", 20), env("MEMORY_SECONDS", 60)];
const SETTLE_SECONDS = env("SETTLE_SECONDS", 62);
const DEPLOYED = env("DEPLOYED", 0) === 1;
const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7);
const ADMIN = lib.hex(24);
const all = SCENARIOS.map((s) => ({ on: "api", ...s }));
const chosen = all.filter((s) => (only ? new RegExp(only).test(s.name) : !s.only));
const scenarios = all.filter((s) => chosen.includes(s) || chosen.some((c) => c.vs?.includes(s.id)));

async function main() {
  const started = Date.now();
  const elapsed = () => `(${Math.round((Date.now() - started) / 1000)} s)`;
  const keyCount = scenarios.filter((s) => s.keys === true).length * KEYS + 10;
  const deep = scenarios.some((s) => s.name.startsWith("deep"));
  const { dir, seed } = lib.seededState({ keyCount, deploymentCount: env("DEPLOYMENTS", 20_000), deep });
  const servers = {};
  const vars = lib.varsOf(seed, { ADMIN_TOKEN: ADMIN, ALLOW_INSECURE_WEBHOOKS: "true" });
  for (const kind of ["api", "ladder"].filter((k) => scenarios.some((s) => s.on === k))) {
    const config = lib.snapshot(kind);
    if (kind === "api" && DEPLOYED) await lib.splitBuild(dirname(config));
    servers[kind] = await new lib.Server(kind, config, lib.copyState(dir, kind), vars[kind]).start();
  }
  let pool = 0;
  const runs = scenarios.map((s) => {
    const c = { server: servers[s.on], seed, admin: ADMIN };
    if (s.keys === true) c.keys = seed.bench.keys.slice(pool * KEYS, ++pool * KEYS);
    return { s, c, slices: [], figures: [] };
  });
  for (const { s, c } of runs) if (s.setup) c.data = await s.setup(c);
  console.error(`bench: set up ${elapsed()}`);

  const rss = [];
  for (let round = 0; round < ROUNDS; round++) {
    // A new process per server per round; the API's left SETTLE_SECONDS after its last request and until
    // quiet first: its limiter objects clean up by alarms 60 s after a key's use (bench/METHOD.md).
    if (round > 0 && servers.api) {
      await lib.sleep(servers.api.lastRequest + SETTLE_SECONDS * 1000 - Date.now());
      await servers.api.quiet();
    }
    for (const server of Object.values(servers))
      if (round > 0) await server.stop().then(() => server.start());
    for (const server of Object.values(servers)) {
      await slice(server, { path: server.name === "api" ? "/healthz" : "/bare" }, { seed }, 1); // its JIT
      const block = runs.filter((r) => r.c.server === server);
      const loads = block.filter((r) => !r.s.probe);
      for (const r of [...loads.slice(round % loads.length), ...loads.slice(0, round % loads.length)]) {
        await warm(r);
        r.slices.push(await slice(server, r.s, r.c, SLICE));
      }
      for (const r of block.filter((r) => r.s.probe)) r.figures.push(await r.s.probe(r.c));
      server.lastRequest = Date.now();
    }
    rss.push(Object.fromEntries(Object.values(servers).map((s) => [s.name, s.rssMb()])));
    console.error(`bench: round ${round + 1}/${ROUNDS} done ${elapsed()}`);
  }

  // Memory: MEMORY_SECONDS of the project read (API) and of the floor (ladder), by thirds in turn;
  // the Worker process's resident memory after each third.
  const memory = [];
  const pair = [runs.find((r) => r.s.name === "GET /v1/projects/{id}"), runs.find((r) => r.s.id === "floor")];
  for (let part = 1; MEMORY_SECONDS > 0 && pair.every(Boolean) && part <= 3; part++) {
    const row = { "after s": (part * MEMORY_SECONDS) / 3 };
    for (const { s, c } of pair) {
      row[`${c.server.name} requests`] = (await slice(c.server, s, c, MEMORY_SECONDS / 3)).n;
      row[`${c.server.name} RSS MB`] = c.server.rssMb();
    }
    memory.push(row);
  }
  const report = format(runs, rss, memory);
  console.log(report);
  const raw = runs.map(({ s, slices, figures }) => ({ name: s.name, slices, figures }));
  lib.saveResults("bench", { argv: process.argv.slice(2), report, runs: raw, rss, memory });
}

/** Each key of the scenario's pool once: a key's first use in an isolate is a D1 lookup. */
async function warm({ s, c }) {
  const path = s.method ? (s.on === "api" ? "/v1/no-such-route" : "/do") : pathOf(s, c);
  for (let i = 0; i < (c.keys?.length ?? 0); i += 10) {
    await Promise.all(
      c.keys.slice(i, i + 10).map(async (key) => {
        const res = await fetch(`${c.server.base}${path}`, { headers: { "x-api-key": key } });
        await res.arrayBuffer();
        if ([401, 429].includes(res.status) || res.status >= 500) throw new Error(`${path} → ${res.status}`);
      }),
    );
  }
}

/** A scenario's path, its {project}, {env}… filled in. */
function pathOf(s, c) {
  const { project, listed, owner } = c.seed.bench;
  const ids = { project: project.id, env: project.env, listed: listed.id, owner, ...c.data };
  return s.path.replace(/\{(\w+)\}/g, (_, name) => ids[name]);
}

/** SLICE seconds of autocannon (lib.load), each request the scenario's next key and `each`. */
function slice(server, s, c, seconds) {
  let k = 0;
  const path = pathOf(s, c);
  const setupRequest = (req) => {
    const r = s.each?.(c) ?? {};
    const headers = { ...req.headers, accept: "application/json" };
    if (c.keys) headers["x-api-key"] = c.keys[k++ % c.keys.length];
    if (s.admin) headers.authorization = `Bearer ${c.admin}`;
    if (r.body) headers["content-type"] = "application/json";
    return { ...req, path: r.path ?? path, headers, body: r.body && JSON.stringify(r.body) };
  };
  return lib.load(server, seconds, CONNECTIONS, { method: s.method ?? "GET", setupRequest });
}

function format(runs, rss, memory) {
  const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "");
  const rungs = Object.fromEntries(runs.filter((r) => r.s.id).map((r) => [r.s.id, r.slices]));
  // Each round's two figures divided: median (min–max) over the rounds.
  const paired = (slices, id, field) => spread(slices.map((x, i) => x[field] / rungs[id][i][field]));
  const rows = runs
    .filter((r) => !r.s.probe)
    .map(({ s, slices }) => {
      const latencies = slices.flatMap((x) => x.latencies);
      const failed = {};
      for (const [k, n] of slices.flatMap((x) => [...Object.entries(x.statuses), ["errors", x.errors]]))
        if ((k === "errors" || k >= 300) && n) failed[k] = (failed[k] ?? 0) + n;
      const ratios = (s.vs ?? [])
        .filter((id) => rungs[id])
        .map((id) => `${id} ${paired(slices, id, "rps")} / ${paired(slices, id, "cpuMs")}`);
      const [rps, cpu] = ["rps", "cpuMs"].map((k) => slices.map((x) => x[k]));
      const latency = [50, 99].map((p) => f(lib.percentile(latencies, p), 0)).join(" / ");
      const bad = Object.entries(failed).map(([k, n]) => `${k}×${n}`);
      return [s.name, spread(rps, 0), latency, spread(cpu), ratios.join(" · "), bad.join(" ")];
    });
  const probes = runs.flatMap(({ s, figures }) =>
    Object.keys(figures[0] ?? {}).map((k) => [`${s.name}: ${k}`, spread(figures.map((x) => x[k]))]),
  );
  const perRound = (name) => `${name} ${rss.map((r) => f(r[name], 0)).join(", ")}`;
  const command = `node bench/run.mjs ${process.argv.slice(2).join(" ")}`.trim();
  const heads = ["scenario", "req/s median (min–max)", "p50 / p99 ms", "Worker CPU ms/req median (min–max)"];
  const memoryRows = memory.map((m) => Object.values(m).map((x) => f(x, 0)));
  return lib.report(
    lib.header(`${command} · ${ROUNDS} rounds × ${SLICE} s a scenario · ${CONNECTIONS} connections`),
    lib.table([...heads, "÷ rung: req/s / CPU, paired by round, median (min–max)", "not 2xx"], rows),
    lib.table(["probe: figure", "median (min–max) over the rounds"], probes),
    `Worker RSS (MB) after each round, a new process each: ${Object.keys(rss[0]).map(perRound).join("; ")}`,
    memory.length &&
      `${MEMORY_SECONDS} s of the project read (api) and the floor (ladder) in turn, by thirds:`,
    lib.table(Object.keys(memory[0] ?? {}), memoryRows),
  );
}

lib.runMain(45, main);
