#!/usr/bin/env node
// `npm run bench`: the API beside a ladder of its own (bench/ladder/), measured in one
// interleaved run on this machine. See bench/README.md for what each figure is.
//
//   node bench/run.mjs [--quick] [--mode=both|all|dev|direct|socket] [--compare=<ref>,…] [--only=<regexp>]
//                      [--without-assets] [--in-api] [--one-pool] [--rotate] [--no-memory] [--no-depth] [--alloc] [--fresh]
//
//  1. one local state (temp dir): migrations applied, a deep organization and the bench
//     organization seeded by SQL (bench/seed.mjs); one copy of it per server;
//  2. per mode, two servers on 127.0.0.1 (ports 8790–8799, first free): the API and the ladder
//     (with --without-assets, two more: both without wrangler.toml's [assets]; with --compare,
//     one more per ref; with --in-api, one more: the API's Worker that also answers the ladder's
//     read rungs, bench/ladder/in-api.ts, so that a read and the rung run in the same isolate).
//     `dev`: `wrangler dev` as users run it (inspector on). `direct`: wrangler's
//     `unstable_startWorker({ dev: { inspector: false } })` (bench/start-worker.mjs);
//  3. ROUNDS interleaved rounds; in each, every target of every server gets SLICE seconds of
//     autocannon at CONNECTIONS connections. Around each slice, the CPU time (utime + stime,
//     /proc/<pid>/stat) of the workerd process that runs the Worker, of the dev proxy's
//     workerd and of wrangler's node processes is read; with --alloc, the `dev` servers' JavaScript
//     allocations over the slice are sampled through their inspector (bench/inspector.mjs);
//     with --fresh, every server is restarted (a new workerd process on the same state) before
//     each round after the first, so that no figure rests on one process's luck;
//  4. memory: per mode, MEMORY_SECONDS of load on GET /v1/projects/{id} in MEMORY_PARTS (3) parts, the RSS of
//     each process after each part;
//  5. pagination depth on the first mode's API (first page vs the page after 10,000 rows);
//  6. tables on stdout, raw figures in bench/results/ (git-ignored). Stops by itself.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { buildDocsAssets, DOCS_ASSETS_DIR } from "../scripts/docs-assets.mjs";
import { bundleModules, connectInspector } from "./inspector.mjs";
import { CHILD_ENV, median, percentile, portFree, stopOnTimeoutOrSignal, wranglerRunner } from "./lib.mjs";
import { cpuSeconds, listeningPorts, roles, rssMb } from "./procs.mjs";
import { DEEP_ROWS, seedSql } from "./seed.mjs";

const args = new Set(process.argv.slice(2));
const QUICK = args.has("--quick");
const modeArg = [...args].find((a) => a.startsWith("--mode="))?.slice(7) ?? "both";
const MODES = { both: ["dev", "direct"], all: ["dev", "direct", "socket"] }[modeArg] ?? modeArg.split(",");
if (!MODES.every((m) => ["dev", "direct", "socket"].includes(m)))
  throw new Error(`unknown --mode=${modeArg}`);
const num = (name, full, quick) => Number(process.env[name] ?? (QUICK ? quick : full));
const SLICE = num("SLICE", 3, 1);
const ROUNDS = num("ROUNDS", 3, 3);
const CONNECTIONS = num("CONNECTIONS", 10, 10);
const KEYS_PER_TARGET = num("KEYS_PER_TARGET", 150, 100);
const MEMORY_SECONDS = args.has("--no-memory") ? 0 : num("MEMORY_SECONDS", 60, 15);
const MEMORY_PARTS = num("MEMORY_PARTS", 3, 3);
const DEPTH_SAMPLES = args.has("--no-depth") ? 0 : num("DEPTH_SAMPLES", 300, 60);
const DEPLOYMENTS = num("DEPLOYMENTS", 12_000, 4_000);
// Before each block of an API server's slices: until this long after its last request (see settle()).
const SETTLE_SECONDS = num("SETTLE_SECONDS", 62, 62);
// --fresh: a new process for every server before each round after the first (see restart()).
const FRESH = args.has("--fresh");
const HARD_TIMEOUT_MS = (FRESH ? 40 : 20) * 60_000;
// --compare=<git ref>[,<ref>…]: also run the API as of those commits, interleaved with the current one.
const COMPARE = [...args].find((a) => a.startsWith("--compare="))?.slice(10);
const ONLY = [...args].find((a) => a.startsWith("--only="))?.slice(7);
const WITHOUT_ASSETS = args.has("--without-assets");
// --in-api: the ladder's read rungs served by the API's own Worker too (bench/ladder/in-api.ts).
// --one-pool: every API read uses one pool of keys (a key's limiter object serves them all, as a
// client's key does), where by default each read has a pool of its own.
const ONE_POOL = args.has("--one-pool");
// --rotate: in round r, each server's block of targets starts r targets later (the ones skipped run
// at its end), so that every target runs early and late in its block over the rounds (run A21: the
// same rung costs ~1.1x of itself when it runs last in a block instead of first).
const ROTATE = args.has("--rotate");
const IN_API = args.has("--in-api");
// --alloc: what each slice's JavaScript allocates, through the inspector of the `dev` servers.
const ALLOC = args.has("--alloc");
if (ALLOC && !MODES.includes("dev")) throw new Error("--alloc needs --mode=dev or both (the inspector)");
if (ALLOC && FRESH)
  throw new Error("--alloc and --fresh: the inspector's connection does not survive a restart");

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const ADMIN_TOKEN = randomBytes(24).toString("hex");
// BENCH_RATE_LIMITS (JSON, as the API's RATE_LIMITS var): every API server's limits, e.g. lifted for a
// run with few keys (KEYS_PER_TARGET=10), where the production limits would refuse most requests.
const API_VARS = {
  ADMIN_TOKEN,
  ...(process.env.BENCH_RATE_LIMITS ? { RATE_LIMITS: process.env.BENCH_RATE_LIMITS } : {}),
};
const childEnv = CHILD_ENV;

const tmp = mkdtempSync(join(tmpdir(), "bench-state-"));
const servers = [];

function cleanUp() {
  // Only the process groups this script started.
  for (const s of servers) {
    s.inspector?.close();
    if (s.child?.pid && s.child.exitCode === null) {
      try {
        process.kill(-s.child.pid, "SIGTERM");
      } catch {}
    }
  }
  rmSync(tmp, { recursive: true, force: true });
}
const guard = stopOnTimeoutOrSignal("bench", HARD_TIMEOUT_MS, cleanUp);

const runWrangler = wranglerRunner(wrangler, root);

const taken = new Set();
async function freePort() {
  for (let port = 8790; port <= 8799; port++) {
    if (!taken.has(port) && (await portFree(port))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error("no free port in 8790–8799");
}

/** Starts one server (`kind` api|ladder, `mode` dev|direct) on its own copy of the state. */
async function start(kind, mode, state, vars, config) {
  const port = await freePort();
  let argv;
  const inspectorPort = mode === "dev" ? await freePort() : undefined;
  if (mode === "dev") {
    argv = [
      wrangler,
      "dev",
      "-c",
      config,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      state,
      ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
      "--log-level",
      "error",
      "--show-interactive-dev-session=false",
    ];
  } else {
    argv = [
      process.execPath,
      join(root, "bench", "start-worker.mjs"),
      config,
      String(port),
      state,
      ...Object.entries(vars).map(([k, v]) => `${k}=${v}`),
    ];
  }
  // group: "" or "no-assets" (--without-assets); targets are divided by rungs of their own group.
  const server = {
    kind,
    mode,
    group: "",
    port,
    argv,
    dir: dirname(config),
    ...(mode === "dev" ? { inspectorPort } : {}),
    base: `http://127.0.0.1:${port}`,
    name: `${kind}/${mode}`,
  };
  spawnServer(server);
  servers.push(server);
  return server;
}

function spawnServer(server) {
  server.child = spawn(server.argv[0], server.argv.slice(1), {
    cwd: root,
    detached: true,
    stdio: ["ignore", "ignore", "inherit"],
    env: childEnv,
  });
}

/**
 * --fresh: the server's processes stopped and started again, on the same port and the same
 * state (its D1 copy, its objects' storage), then found and checked as at the start. A process
 * keeps what it was dealt for its whole life (where its heap and code landed, what its JIT
 * chose), and two processes running the same code were seen 0.15x of the rung apart in one run
 * (bench/README.md, run ο); a new process per round makes that one more thing a median evens out.
 */
async function restart(server) {
  const { child } = server;
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    const timeout = sleep(10_000).then(() => "timeout");
    if ((await Promise.race([exited, timeout])) === "timeout") {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      await exited;
    }
  }
  for (let i = 0; i < 60 && !(await portFree(server.port)); i++) await sleep(500);
  spawnServer(server);
  // `socket` mode: the new process's own socket is found again (bypassProxy) behind the proxy's port.
  server.base = `http://127.0.0.1:${server.port}`;
  await waitReady(server, server.kind === "ladder" ? "/bare" : "/healthz");
  // A new process: nothing of the last block's clean-up is left to wait for (settle() waited).
  server.lastBlock = undefined;
}

async function waitReady(server, path) {
  for (let i = 0; i < 240; i++) {
    try {
      const res = await fetch(`${server.base}${path}`);
      await res.arrayBuffer();
      if (res.ok) {
        // The Worker's workerd, the dev proxy's workerd (the one listening on the port), node.
        server.pids = roles(server.child.pid, server.port);
        if (server.pids.worker.length !== 1) {
          throw new Error(`${server.name}: expected one Worker process, found ${server.pids.worker}`);
        }
        if (server.mode === "socket") await bypassProxy(server, path);
        return;
      }
    } catch (err) {
      if (err instanceof Error && err.message.includes("expected one")) throw err;
    }
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited`);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${server.name} did not become ready`);
}

/** `socket` mode: from now on, requests go straight to the Worker's own workerd socket. */
async function bypassProxy(server, path) {
  for (const port of listeningPorts(server.pids.worker[0])) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      await res.arrayBuffer();
      if (res.ok) {
        server.base = `http://127.0.0.1:${port}`;
        server.socketPort = port;
        return;
      }
    } catch {}
  }
  throw new Error(`${server.name}: no socket of the Worker's process answers ${path}`);
}

async function inBatches(n, size, make) {
  const out = [];
  for (let i = 0; i < n; i += size) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, j) => make(i + j)))));
  }
  return out;
}

async function request(base, method, path, { key, body, admin, timeout = 60_000 } = {}) {
  const headers = { accept: "application/json" };
  if (key) headers["x-api-key"] = key;
  if (admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeout),
    });
  } catch (err) {
    throw new Error(`${method} ${base}${path}: ${err.cause?.message ?? err.message}`);
  }
  const text = await res.text();
  return { status: res.status, text, headers: res.headers };
}

// Headers every HTTP answer has, whoever makes it; and those whose values vary per request.
const TRANSPORT_HEADERS = new Set(["content-length", "date", "connection", "keep-alive"]);
const VARYING_HEADERS = new Set(["ratelimit", "x-ratelimit-remaining", "x-ratelimit-reset"]);

/**
 * The headers rung stands for carrying the API read's headers: it must answer the same header names,
 * with values of the same length (the ones that vary per request aside), or its figure means nothing.
 */
async function checkHeadersRung(ladder, api, projectId, key) {
  const [rung, read] = await Promise.all([
    request(ladder.base, "GET", `/do-d1-headers?id=${projectId}`, { key }),
    request(api.base, "GET", `/v1/projects/${projectId}`, { key }),
  ]);
  const shape = (headers) =>
    [...headers]
      .filter(([name]) => !TRANSPORT_HEADERS.has(name))
      .map(([name, value]) => (VARYING_HEADERS.has(name) ? name : `${name}: ${value.length}`))
      .sort()
      .join("; ");
  if (shape(rung.headers) !== shape(read.headers)) {
    throw new Error(
      `the headers rung does not carry the API read's headers:\n  rung ${shape(rung.headers)}\n  API  ${shape(read.headers)}`,
    );
  }
}

async function expectOk(base, method, path, options) {
  const res = await request(base, method, path, options);
  if (res.status >= 300)
    throw new Error(`${method} ${base}${path} → ${res.status} ${res.text.slice(0, 300)}`);
  return res.text ? JSON.parse(res.text) : null;
}

/**
 * One autocannon slice. `next()` gives each request its key, path and body. Latencies of
 * every response are kept so the rounds can be merged; CPU of the server's processes is
 * read right before and right after.
 */
function slice(server, target, seconds) {
  const latencies = [];
  const statuses = {};
  const before = {
    worker: cpuSeconds(server.pids.worker),
    proxy: cpuSeconds(server.pids.proxy),
    node: cpuSeconds(server.pids.node),
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.base,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: target.method ?? "GET",
            path: target.path,
            setupRequest: (req) => {
              const r = target.next ? target.next() : {};
              const headers = { ...req.headers, accept: "application/json" };
              if (r.key) headers["x-api-key"] = r.key;
              if (target.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
              if (r.body !== undefined) headers["content-type"] = "application/json";
              return {
                ...req,
                path: r.path ?? target.path,
                headers,
                body: r.body === undefined ? undefined : JSON.stringify(r.body),
              };
            },
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        resolve({
          result,
          latencies,
          statuses,
          cpu: {
            worker: cpuSeconds(server.pids.worker) - before.worker,
            proxy: cpuSeconds(server.pids.proxy) - before.proxy,
            node: cpuSeconds(server.pids.node) - before.node,
          },
        });
      },
    );
    instance.on("response", (_client, status, _bytes, responseTime) => {
      latencies.push(responseTime);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

/** A slice; with --alloc, on a server with an inspector, also what its JavaScript allocated. */
async function profiledSlice(server, target) {
  if (!server.inspector) return slice(server, target, SLICE);
  await server.inspector.startAllocations();
  const s = await slice(server, target, SLICE);
  s.alloc = await server.inspector.stopAllocations(server.moduleAt);
  return s;
}

/**
 * A target's ratios to its rung, paired by round: each round's figure over the rung's figure
 * of the same round (measured minutes apart at most, under the same load), then the median.
 */
function ratiosTo(r, rung) {
  const ratios = (mine, theirs) => median(mine.map((x, i) => x / theirs[i]));
  return {
    ratio: ratios(r.perRoundExact, rung.perRoundExact),
    cpuRatio: ratios(r.workerCpuPerRound, rung.workerCpuPerRound),
    ...(r.allocPerRound && rung.allocPerRound
      ? { allocRatio: ratios(r.allocPerRound, rung.allocPerRound) }
      : {}),
  };
}

function summarize(target, slices) {
  const latencies = slices.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const total = slices.reduce((sum, s) => sum + s.result.requests.total, 0);
  const perRound = slices.map((s) => s.result.requests.total / s.result.duration);
  const cpu = (field) => (1000 * slices.reduce((sum, s) => sum + s.cpu[field], 0)) / total;
  // Worker CPU per request of each round: the figure is their median, like req/s's.
  const workerCpuPerRound = slices.map((s) => (1000 * s.cpu.worker) / Math.max(1, s.result.requests.total));
  const statuses = {};
  for (const s of slices)
    for (const [k, n] of Object.entries(s.statuses)) statuses[k] = (statuses[k] ?? 0) + n;
  // --alloc: bytes of JavaScript allocated per request, each round's, and by module over all rounds.
  const alloc = {};
  if (slices.every((s) => s.alloc)) {
    alloc.allocPerRound = slices.map((s) => s.alloc.total / Math.max(1, s.result.requests.total));
    alloc.allocBytes = median(alloc.allocPerRound);
    const byModule = new Map();
    for (const s of slices)
      for (const [m, bytes] of s.alloc.byModule) byModule.set(m, (byModule.get(m) ?? 0) + bytes);
    alloc.allocByModule = Object.fromEntries(
      [...byModule].sort((a, b) => b[1] - a[1]).map(([m, bytes]) => [m, bytes / total]),
    );
  }
  return {
    name: target.name,
    server: target.server.name,
    mode: target.server.mode,
    group: target.server.group,
    compare: target.compare,
    floor: target.floor,
    outside: target.outside,
    page: target.page,
    headers: target.headers,
    rps: median(perRound),
    rpsMin: Math.min(...perRound),
    rpsMax: Math.max(...perRound),
    perRound: perRound.map((r) => Math.round(r)),
    perRoundExact: perRound,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    total,
    statuses,
    errors: slices.reduce((sum, s) => sum + s.result.errors + s.result.timeouts, 0),
    workerCpuMs: median(workerCpuPerRound),
    workerCpuMin: Math.min(...workerCpuPerRound),
    workerCpuMax: Math.max(...workerCpuPerRound),
    workerCpuPerRound,
    proxyCpuMs: cpu("proxy"),
    nodeCpuMs: cpu("node"),
    ...alloc,
  };
}

/**
 * The indices of `targets` in the order a round runs them: each server's targets stay one block, in
 * the order the servers first appear, and each block starts `shift` targets later (wrapping round).
 */
function roundOrder(targets, shift) {
  const blocks = new Map();
  for (const [t, target] of targets.entries()) {
    const block = blocks.get(target.server) ?? [];
    block.push(t);
    blocks.set(target.server, block);
  }
  return [...blocks.values()].flatMap((block) => {
    const k = shift % block.length;
    return [...block.slice(k), ...block.slice(0, k)];
  });
}

/** Sequential requests, one target after the other in turn; latency percentiles per target. */
async function alternate(base, targets, samples) {
  const out = targets.map(() => []);
  for (let i = 0; i < samples; i++) {
    for (const [t, target] of targets.entries()) {
      const start = performance.now();
      const res = await request(base, "GET", target.path, { key: target.keys[i % target.keys.length] });
      if (res.status !== 200) throw new Error(`${target.path} → ${res.status}`);
      out[t].push(performance.now() - start);
    }
  }
  return targets.map((target, t) => {
    const sorted = out[t].sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    return { name: target.name, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean };
  });
}

const rotate = (pool) => {
  let i = 0;
  return () => pool[i++ % pool.length];
};

const keyed = (pool) => {
  const next = rotate(pool);
  return () => ({ key: next() });
};

/** The targets of one mode: the ladder's rungs and the API's routes. */
function targetsFor(ladders, apis, seed, keyPools, inApis = []) {
  const [ladder, ...twins] = ladders;
  const p = seed.bench.project;
  let writes = 0;
  const uniqueName = () => `w-${writes++}-${randomBytes(4).toString("hex")}`;
  const deployments = (server) => {
    let i = 0;
    return () => {
      if (i >= seed.bench.deployments.length) server.deploymentsExhausted = true;
      return seed.bench.deployments[i++ % seed.bench.deployments.length];
    };
  };
  const pool = (n) => keyPools[n];
  // --one-pool: every API read with the keys of the first, as the ladder's rungs share theirs.
  const readPool = (n) => pool(ONE_POOL ? 4 : n);
  const apiTargets = (api) => {
    const A = (name, extra) => ({ server: api, name: api.label ? `${api.label} ${name}` : name, ...extra });
    const apiDeployment = deployments(api);
    return [
      A("GET /healthz (the API's hono, no auth, no I/O)", { path: "/healthz", compare: "bare" }),
      A("GET /v1/projects/{id}", {
        path: `/v1/projects/${p.id}`,
        next: keyed(readPool(4)),
        compare: "do-d1",
        floor: "floor",
        headers: "do-d1-headers",
        warmPool: readPool(4),
      }),
      A("GET /v1/projects?limit=20", {
        path: "/v1/projects?limit=20",
        next: keyed(readPool(5)),
        compare: "do-d1",
        floor: "floor",
        page: "do-d1-page",
        warmPool: readPool(5),
      }),
      A("GET /v1/deployments?limit=20", {
        path: "/v1/deployments?limit=20",
        next: keyed(readPool(6)),
        compare: "do-d1",
        floor: "floor",
        page: "do-d1-page",
        warmPool: readPool(6),
      }),
      A("GET /v1/environments/{id}/deployments?limit=20", {
        path: `/v1/environments/${p.env}/deployments?limit=20`,
        next: keyed(readPool(7)),
        compare: "do-d1",
        floor: "floor",
        page: "do-d1-page",
        warmPool: readPool(7),
      }),
      A("GET /v1/projects/{id}/members?limit=20", {
        path: `/v1/projects/${p.id}/members?limit=20`,
        next: keyed(readPool(8)),
        compare: "do-d1",
        floor: "floor",
        page: "do-d1-page",
        warmPool: readPool(8),
      }),
      // Reads behind a project: the authorizing lookup and the rows in one D1 batch.
      A("GET /v1/projects/{id}/members/{account_id}", {
        path: `/v1/projects/${p.id}/members/${seed.bench.owner}`,
        next: keyed(readPool(10)),
        compare: "do-d1",
        floor: "floor",
        warmPool: readPool(10),
      }),
      A("GET /v1/projects/{id}/notification-integrations?limit=20", {
        path: `/v1/projects/${seed.bench.listed.id}/notification-integrations?limit=20`,
        next: keyed(readPool(11)),
        compare: "do-d1",
        floor: "floor",
        page: "do-d1-page",
        warmPool: readPool(11),
      }),
      A("GET /v1/projects/{id}/events?limit=20", {
        path: `/v1/projects/${seed.bench.listed.id}/events?limit=20`,
        next: keyed(readPool(12)),
        compare: "do-d1",
        floor: "floor",
        page: "do-d1-page",
        warmPool: readPool(12),
      }),
      A("POST /v1/projects", {
        path: "/v1/projects",
        method: "POST",
        next: () => ({ key: pool(9)[writes % pool(9).length], body: { name: uniqueName() } }),
        compare: "write-project",
        warmPool: pool(9),
      }),
      A("PATCH /internal/v1/deployments/{id} → in_progress (+ event)", {
        path: "/internal/v1/deployments/x",
        method: "PATCH",
        admin: true,
        next: () => ({
          path: `/internal/v1/deployments/${apiDeployment()}`,
          body: { status: "in_progress" },
        }),
        compare: "write-transition",
      }),
    ];
  };
  const ladderTargets = (server) => {
    const L = (name, extra) => ({
      server,
      name: `${server.label ? `${server.label} ` : ""}ladder: ${name}`,
      ...extra,
    });
    const ladderDeployment = deployments(server);
    return [
      L("bare JSON", { path: "/bare", rung: "bare" }),
      L("one DO RPC", { path: "/do", next: keyed(pool(0)), rung: "do", warmPool: pool(0) }),
      L("one D1 SELECT by primary key", { path: `/d1?id=${p.id}`, rung: "d1" }),
      L("DO RPC then D1 SELECT", {
        path: `/do-d1?id=${p.id}`,
        next: keyed(pool(1)),
        rung: "do-d1",
        warmPool: pool(1),
      }),
      L("DO + D1, answered with the API's response headers", {
        path: `/do-d1-headers?id=${p.id}`,
        // The same keys (objects) as the DO + D1 rung: the same counter work.
        next: keyed(pool(1)),
        rung: "do-d1-headers",
        warmPool: pool(1),
      }),
      L("DO + D1, the SELECT in a D1 session", {
        path: `/do-d1-session?id=${p.id}`,
        // The same keys (objects) as the DO + D1 rung: the same counter work.
        next: keyed(pool(1)),
        rung: "do-d1-session",
        warmPool: pool(1),
      }),
      L("DO RPC then a D1 page of 20 rows", {
        path: "/do-d1-page",
        // The same keys (objects) as the DO + D1 rung: the same counter work.
        next: keyed(pool(1)),
        rung: "do-d1-page",
        warmPool: pool(1),
      }),
      L("DO + D1 through hono + zod-openapi", {
        path: `/hono/projects/${p.id}`,
        next: keyed(pool(2)),
        rung: "hono",
        warmPool: pool(2),
      }),
      L("floor: DO + D1 session through hono + zod-openapi", {
        path: `/hono/session/projects/${p.id}`,
        // The same keys (objects) as the hono rung.
        next: keyed(pool(2)),
        rung: "floor",
        warmPool: pool(2),
      }),
      L("write: DO RPC + the D1 batch of POST /v1/projects", {
        path: "/write/project",
        method: "POST",
        next: () => ({ key: pool(3)[writes % pool(3).length], body: { name: uniqueName() } }),
        rung: "write-project",
        warmPool: pool(3),
      }),
      L("write: SELECT + batch (UPDATE + event) + queue send", {
        path: "/write/transition/x",
        method: "PATCH",
        next: () => ({ path: `/write/transition/${ladderDeployment()}` }),
        rung: "write-transition",
      }),
    ];
  };
  return [
    ...ladderTargets(ladder),
    // A ladder without [assets] (--without-assets) runs the rungs that the API rows without
    // [assets] are divided by.
    ...twins.flatMap((twin) => ladderTargets(twin).filter((t) => TWIN_RUNGS.has(t.rung))),
    ...apis.flatMap(apiTargets),
    // --in-api: the read rungs and the API's routes of one process, in one block; each rung is also
    // divided by the same rung of the ladder's own process (`outside`).
    // Between them, the climb from the rung to the read (bench/ladder/in-api.ts), each step with
    // keys of its own.
    ...inApis.flatMap((server) => [
      ...ladderTargets(server)
        .filter((t) => IN_API_RUNGS.has(t.rung))
        .map((t) => ({ ...t, outside: t.rung })),
      ...CLIMB.map(([step, what], i) => ({
        server,
        name: `${server.label} climb ${i + 1}: ${what}`,
        path: ROUTE_STEPS.has(step) ? `/climb/${step}/v1/projects/${p.id}` : `/climb/${step}?id=${p.id}`,
        next: keyed(pool(13 + i)),
        compare: "do-d1",
        floor: "floor",
        warmPool: pool(13 + i),
        climbOf: /^\S+ .*GET \/v1\/projects\/\{id\}$/,
      })),
      ...CLIMB_LIST.map(([step, what], i) => ({
        server,
        name: `${server.label} list climb ${i + 1}: ${what}`,
        path: ROUTE_STEPS.has(step) ? `/climb/${step}/v1/projects?limit=20` : `/climb/${step}`,
        next: keyed(pool(13 + CLIMB.length + i)),
        compare: "do-d1",
        floor: "floor",
        page: "do-d1-page",
        warmPool: pool(13 + CLIMB.length + i),
        climbOf: /^\S+ .*GET \/v1\/projects\?limit=20$/,
      })),
      ...apiTargets(server),
      // The control for where a target stands in the block: the same rungs once more, last.
      ...ladderTargets(server)
        .filter((t) => IN_API_RUNGS.has(t.rung) && t.rung !== "floor")
        .map(({ rung, ...t }) => ({
          ...t,
          name: `${t.name}, again, last in the block`,
          compare: rung,
          climbOf: /GET \/v1\/projects/,
        })),
    ]),
  ];
}

const IN_API_RUNGS = new Set(["do-d1", "do-d1-page", "floor"]);
const CLIMB = [
  ["auth", "the rung + the API's authentication"],
  ["limiter", "… + the API's limiter call in place of the counter"],
  ["service", "… + the API's getProject on a D1 session in place of the SELECT"],
  [
    "app",
    "the API's route on hono with only the layers it needs (no CORS, idempotency, scope, audit context, body guard, ETag)",
  ],
  ["etag", "… + the ETag"],
  ["layers", "every layer of the API, on a router of two routes"],
];
const CLIMB_LIST = [
  ["limiter-page", "the page rung with the API's authentication and limiter call"],
  ["list-sql", "… + the API's SQL of the page on a D1 session, raw(), rows answered as they come"],
  ["list-service", "… + the API's listProjects on a D1 session in place of the SELECT"],
  ["app", "the API's list route on hono with only the layers it needs"],
  ["etag", "… + the ETag"],
  ["layers", "every layer of the API, on a router of two routes"],
];
const ROUTE_STEPS = new Set(["app", "etag", "layers"]);

const TWIN_RUNGS = new Set([
  "bare",
  "do-d1",
  "do-d1-headers",
  "do-d1-page",
  "floor",
  "write-project",
  "write-transition",
]);

/**
 * The API's wrangler.toml for --in-api: its entry bench/ladder/in-api.ts, and the ladder's counter
 * object bound beside the rate limiter (a second class, so a second migration).
 */
function inApiToml(file) {
  const toml = readFileSync(file, "utf8");
  if (!/^main = "src\/index.ts"$/m.test(toml))
    throw new Error(`--in-api expects main = "src/index.ts" in ${file}`);
  return `${toml.replace(/^main = .*$/m, 'main = "bench/ladder/in-api.ts"')}
[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"

[[migrations]]
tag = "v2-bench-ladder"
new_sqlite_classes = ["Counter"]
`;
}

/** A wrangler.toml without its [assets] (and the [build] that fills them), which must end it. */
function withoutAssets(file) {
  const toml = readFileSync(file, "utf8");
  const cut = toml.search(/^\[(build|assets)\]/m);
  if (cut < 0 || /^\[(?!build\]|assets\])/m.test(toml.slice(cut)))
    throw new Error(`--without-assets expects [build] and [assets] to end ${file}`);
  return toml.slice(0, cut);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/**
 * Called when a server's block of slices (its targets, one after another) begins, from the second
 * round on. An API server's rate-limiter objects clean up after themselves: each key used in a
 * block gets its object's alarm one window (60 s) after its first request there and again after its
 * last one, and the last alarm deletes the object's storage (src/rate-limit/limiter.ts). Locally
 * those alarms run in the Worker's own workerd process, a few ms of CPU each, and a block uses over a
 * thousand keys: left alone, the clean-up of one slice's keys lands in whichever slice of the same
 * server runs a minute later — the same targets every round — and is counted as their requests'.
 * So an API server's next block waits until SETTLE_SECONDS after its last request and until its
 * process is quiet. Every server's CPU between its blocks is recorded either way (the ladder's
 * counters keep no state that expires: its figure is the control) and reported per key.
 */
async function settle(server) {
  const last = server.lastBlock;
  if (!last) return;
  const waitFrom = Date.now();
  if (server.kind === "api" && SETTLE_SECONDS > 0) {
    await sleep(last.endedAt + SETTLE_SECONDS * 1000 - Date.now());
    // Quiet: under 5 ms of CPU in half a second, for at most 20 s more.
    for (let i = 0; i < 40; i++) {
      const before = cpuSeconds(server.pids.worker);
      await sleep(500);
      if (cpuSeconds(server.pids.worker) - before < 0.005) break;
    }
  }
  server.between.push({
    cpuSeconds: cpuSeconds(server.pids.worker) - last.cpuAtEnd,
    seconds: (Date.now() - last.endedAt) / 1000,
    waitedSeconds: (Date.now() - waitFrom) / 1000,
    keys: last.keys,
  });
}

/**
 * Every key of a pool once, right before its slice: a key's first use in an isolate is a D1
 * lookup and a last_used_at write, then it stays cached for 30 s; and an object idle for a
 * while is evicted, so its next call opens its storage again. The slices measure the steady
 * state of busy keys and objects — on the ladder (its counter objects) as on the API.
 */
async function warm(target) {
  if (!target.warmPool) return;
  const path = target.method === "POST" || target.method === "PATCH" ? "/v1/no-such-route" : target.path;
  const ladderPath = target.server.kind === "ladder" ? "/do" : path;
  await inBatches(target.warmPool.length, 20, async (i) => {
    let res;
    try {
      res = await request(target.server.base, "GET", ladderPath, {
        key: target.warmPool[i],
        timeout: 5_000,
      });
    } catch (err) {
      // A request not answered in time (seen on the API's cold-key path, under a loaded
      // machine, in every mode): counted and reported, not fatal.
      target.server.stuck = (target.server.stuck ?? 0) + 1;
      console.error(`bench: ${err.message}`);
      return;
    }
    if (res.status === 401 || res.status === 429 || res.status >= 500) {
      throw new Error(`warm-up ${target.server.name} ${ladderPath} → ${res.status}`);
    }
  });
}

async function main() {
  const t0 = Date.now();
  // 0–12: the ladder's and the API's targets; 13 on: the climb (--in-api only).
  const pools = 13 + (IN_API ? CLIMB.length + CLIMB_LIST.length : 0);
  const base = join(tmp, "seeded");
  mkdirSync(base);
  runWrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", base]);
  const seed = seedSql({ keyCount: pools * KEYS_PER_TARGET + 10, deploymentCount: DEPLOYMENTS });
  const seedFile = join(tmp, "seed.sql");
  writeFileSync(seedFile, seed.sql);
  runWrangler(["d1", "execute", "DB", "--local", "--persist-to", base, "--file", seedFile, "--yes"]);
  console.error(`bench: seeded in ${Date.now() - t0} ms (${tmp})`);
  const keyPools = Array.from({ length: pools }, (_, i) =>
    seed.bench.keys.slice(i * KEYS_PER_TARGET, (i + 1) * KEYS_PER_TARGET),
  );

  // What the servers run is a snapshot taken now, in the temp dir: the working tree's src/
  // (so that editing it during a run changes nothing: wrangler rebuilds and restarts a Worker
  // whose sources change, even with watch off), the ladder, and each COMPARE ref's src/.
  buildDocsAssets();
  const snapshot = (name, fill) => {
    const dir = join(tmp, name);
    mkdirSync(dir);
    fill(dir);
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    // wrangler.toml's [assets] (the /docs renderer) and the [build] step that fills them.
    symlinkSync(join(root, "scripts"), join(dir, "scripts"));
    mkdirSync(join(dir, "dist"));
    symlinkSync(DOCS_ASSETS_DIR, join(dir, "dist", "assets"));
    return join(dir, "wrangler.toml");
  };
  const apiConfig = snapshot("head", (dir) => {
    cpSync(join(root, "src"), join(dir, "src"), { recursive: true });
    cpSync(join(root, "wrangler.toml"), join(dir, "wrangler.toml"));
  });
  const ladderConfig = snapshot("ladder", (dir) => {
    for (const file of ["wrangler.toml", "worker.ts", "rungs.ts"])
      cpSync(join(root, "bench", "ladder", file), join(dir, file));
  });
  const refs = (COMPARE ? COMPARE.split(",") : []).map((ref, i) => ({
    ref,
    label: `@${ref}`,
    config: snapshot(`ref${i}`, (dir) =>
      execFileSync("sh", ["-c", `git -C "${root}" archive "${ref}" src wrangler.toml | tar -x -C "${dir}"`]),
    ),
  }));
  // --without-assets: the same API with wrangler.toml's [assets] (and the [build] that fills them)
  // left out, so that no asset router runs in front of it: what the router costs, side by side.
  if (WITHOUT_ASSETS) {
    refs.push({
      ref: "no-assets",
      label: "(no [assets])",
      config: snapshot("no-assets", (dir) => {
        cpSync(join(root, "src"), join(dir, "src"), { recursive: true });
        writeFileSync(join(dir, "wrangler.toml"), withoutAssets(join(root, "wrangler.toml")));
      }),
    });
  }
  // …and the ladder's rungs that those rows are divided by, from a ladder without [assets] too:
  // like for like, neither side crosses the router.
  const ladderNoAssetsConfig =
    WITHOUT_ASSETS &&
    snapshot("ladder-no-assets", (dir) => {
      for (const file of ["worker.ts", "rungs.ts"])
        cpSync(join(root, "bench", "ladder", file), join(dir, file));
      writeFileSync(
        join(dir, "wrangler.toml"),
        withoutAssets(join(root, "bench", "ladder", "wrangler.toml")),
      );
    });
  // --in-api: the API's Worker with the ladder's rungs beside it, in one isolate (bench/ladder/in-api.ts).
  const inApiConfig =
    IN_API &&
    snapshot("in-api", (dir) => {
      cpSync(join(root, "src"), join(dir, "src"), { recursive: true });
      mkdirSync(join(dir, "bench", "ladder"), { recursive: true });
      for (const file of ["worker.ts", "rungs.ts", "in-api.ts"])
        cpSync(join(root, "bench", "ladder", file), join(dir, "bench", "ladder", file));
      writeFileSync(join(dir, "wrangler.toml"), inApiToml(join(root, "wrangler.toml")));
    });
  const perMode = [];
  for (const mode of MODES) {
    const copy = (name) => {
      const dir = join(tmp, `${name}-${mode}`);
      cpSync(base, dir, { recursive: true });
      return dir;
    };
    const api = await start("api", mode, copy("api"), API_VARS, apiConfig);
    const startLadder = (name, config) =>
      start("ladder", mode, copy(name), { ORG_ID: seed.bench.org, ACCOUNT_ID: seed.bench.owner }, config);
    const ladder = await startLadder("ladder", ladderConfig);
    const ladders = [ladder];
    if (ladderNoAssetsConfig) {
      const server = await startLadder("ladder-no-assets", ladderNoAssetsConfig);
      server.label = "(no [assets])";
      server.group = "no-assets";
      server.name = `ladder${server.label}/${mode}`;
      ladders.push(server);
    }
    const apis = [api];
    for (const [i, { ref, label, config }] of refs.entries()) {
      const server = await start("api", mode, copy(`ref${i}`), API_VARS, config);
      server.label = label;
      if (ref === "no-assets") server.group = "no-assets";
      server.name = `api${server.label}/${mode}`;
      apis.push(server);
    }
    const inApis = [];
    if (inApiConfig) {
      const server = await start(
        "api",
        mode,
        copy("in-api"),
        { ...API_VARS, ORG_ID: seed.bench.org, ACCOUNT_ID: seed.bench.owner },
        inApiConfig,
      );
      server.label = "(in the API's isolate)";
      server.group = "in-api";
      server.name = `api${server.label}/${mode}`;
      inApis.push(server);
    }
    perMode.push({ mode, api, apis, ladder, ladders, inApis });
  }
  for (const { apis, ladder, ladders, inApis } of perMode) {
    for (const twin of ladders.slice(1)) await waitReady(twin, "/bare");
    for (const api of [...apis.slice(1), ...inApis]) await waitReady(api, "/healthz");
    const api = apis[0];
    await waitReady(api, "/healthz");
    await waitReady(ladder, "/bare");
    const p = seed.bench.project.id;
    // The ladder reads the same row as the API: same seeded copy.
    const row = await expectOk(ladder.base, "GET", `/d1?id=${p}`);
    const viaApi = await expectOk(api.base, "GET", `/v1/projects/${p}`, { key: seed.bench.keys.at(-1) });
    if (row.id !== viaApi.id) throw new Error("the ladder and the API do not read the same project");
    await checkHeadersRung(ladder, api, p, seed.bench.keys.at(-1));
  }
  console.error(
    `bench: ${servers.map((s) => `${s.name} :${s.port} worker pid ${s.pids.worker} proxy ${s.pids.proxy}`).join("; ")}`,
  );

  if (ALLOC) {
    for (const server of servers) {
      if (server.inspectorPort === undefined) continue;
      server.inspector = await connectInspector(server.inspectorPort);
      // Built by now: every server has answered a request.
      server.moduleAt = bundleModules(server.dir) ?? undefined;
    }
  }

  // --only=<regexp>: just the targets whose name matches, and the rungs they are compared with.
  const all = perMode.flatMap(({ apis, ladders, inApis }) =>
    targetsFor(ladders, apis, seed, keyPools, inApis),
  );
  const only = ONLY ? new RegExp(ONLY) : null;
  const chosen = all.filter((t) => !only || only.test(t.name));
  const targets = all.filter(
    (t) =>
      chosen.includes(t) ||
      (t.climbOf && chosen.some((c) => c.server === t.server && t.climbOf.test(c.name))) ||
      (t.rung !== undefined &&
        chosen.some(
          (c) =>
            c.server.mode === t.server.mode &&
            c.server.group === t.server.group &&
            (c.compare === t.rung || c.floor === t.rung || c.page === t.rung || c.headers === t.rung),
        )),
  );
  if (!targets.some((t) => t.rung === "do-d1")) {
    targets.unshift(...all.filter((t) => t.rung === "do-d1"));
  }
  for (const target of targets) {
    if (target.server.kind === "ladder") await warm(target);
  }
  await Promise.all(perMode.map(({ api }) => slice(api, { path: "/healthz" }, 1)));

  const slices = targets.map(() => []);
  const rssByRound = [];
  for (const server of servers) server.between = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (FRESH && round > 0) {
      // Each API server's last clean-up still runs in the process that owes it (settle()).
      await Promise.all(servers.map((server) => settle(server)));
      for (const server of servers) await restart(server);
      console.error(
        `bench: round ${round + 1}: restarted, worker pids ${servers.map((x) => `${x.name} ${x.pids.worker}`).join(", ")}`,
      );
      await Promise.all(perMode.map(({ api }) => slice(api, { path: "/healthz" }, 1)));
    }
    let block;
    const order = ROTATE ? roundOrder(targets, round) : [...targets.keys()];
    if (ROTATE) console.error(`bench: round ${round + 1}: ${order.map((t) => targets[t].name).join(" → ")}`);
    for (const t of order) {
      const target = targets[t];
      const { server } = target;
      if (block?.server !== server) {
        await settle(server);
        block = { server, keys: 0 };
      }
      await warm(target);
      slices[t].push(await profiledSlice(server, target));
      block.keys += target.warmPool?.length ?? 0;
      server.lastBlock = { endedAt: Date.now(), cpuAtEnd: cpuSeconds(server.pids.worker), keys: block.keys };
    }
    rssByRound.push(Object.fromEntries(servers.map((s) => [s.name, rssMb(s.pids.worker)])));
    console.error(`bench: round ${round + 1}/${ROUNDS} done (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const results = targets.map((target, t) => summarize(target, slices[t]));
  // A rung of the same mode and group as r; targets without a rung of their own (the ladder's
  // rungs, /healthz) are divided by the DO + D1 rung.
  const rungOf = (r, name) =>
    results.find(
      (x) => x.mode === r.mode && x.group === r.group && targets[results.indexOf(x)].rung === name,
    );
  for (const r of results) {
    const rung = rungOf(r, r.compare ?? "do-d1");
    if (!rung) continue;
    Object.assign(r, ratiosTo(r, rung));
    if (r.compare) r.rungName = rung.name;
    // --in-api: a rung of the API's isolate ÷ the same rung in the ladder's own process.
    const outside =
      r.outside &&
      results.find(
        (x) => x.mode === r.mode && x.group === "" && targets[results.indexOf(x)].rung === r.outside,
      );
    if (outside) {
      const { ratio, cpuRatio } = ratiosTo(r, outside);
      r.outsideRatio = ratio;
      r.outsideCpuRatio = cpuRatio;
    }
    // Reads are also divided by the floor, lists by the page rung too (the same I/O for 20 rows).
    for (const kind of ["floor", "page", "headers"]) {
      const other = r[kind] && rungOf(r, r[kind]);
      if (!other) continue;
      const { ratio, cpuRatio, allocRatio } = ratiosTo(r, other);
      r[`${kind}Ratio`] = ratio;
      r[`${kind}CpuRatio`] = cpuRatio;
      if (allocRatio !== undefined) r[`${kind}AllocRatio`] = allocRatio;
    }
  }
  const exhausted = servers.filter((s) => s.deploymentsExhausted).map((s) => s.name);
  const loadAfterRounds = loadavg();

  // Memory: MEMORY_SECONDS of load on GET /v1/projects/{id} in MEMORY_PARTS parts, RSS after each.
  const memory = [];
  if (MEMORY_SECONDS > 0) {
    for (const { mode, api } of perMode) {
      // Every pool's keys (so that no key passes the limiter's 100 / min), without warm-up:
      // a key that went cold costs a lookup, which is fine for a memory figure.
      const target = {
        ...all.find((x) => x.server === api && x.name === "GET /v1/projects/{id}"),
        next: keyed(keyPools.flat()),
      };
      const rows = [{ after: "start", ...rssOf(api) }];
      for (let part = 1; part <= MEMORY_PARTS; part++) {
        const s = await slice(api, target, MEMORY_SECONDS / MEMORY_PARTS);
        rows.push({
          after: `${Math.round((part * MEMORY_SECONDS) / MEMORY_PARTS)} s`,
          requests: s.result.requests.total,
          ...rssOf(api),
        });
      }
      memory.push({ mode, rows });
    }
  }

  // Depth: the first page and the page after 10,000 rows, requested alternately one at a time.
  let depth = [];
  if (DEPTH_SAMPLES > 0) {
    const api = perMode[0].api;
    const key = seed.deep.keys;
    let after;
    for (let page = 0; page < 50; page++) {
      const path = `/v1/projects?limit=200${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      after = (await expectOk(api.base, "GET", path, { key: key[0] })).next_page;
    }
    const deepPath = `/v1/projects?limit=20&after=${encodeURIComponent(after)}`;
    const page = await expectOk(api.base, "GET", deepPath, { key: key[1] });
    if (page.data.length !== 20 || page.data[0].name !== `p${DEEP_ROWS - 10_001}`) {
      throw new Error(`the deep page does not start after row 10,000: ${page.data[0]?.name}`);
    }
    depth = await alternate(
      api.base,
      [
        { name: "deep org: first page (limit 20)", path: "/v1/projects?limit=20", keys: key.slice(2, 200) },
        { name: "deep org: page after 10,000 rows (limit 20)", path: deepPath, keys: key.slice(200) },
      ],
      DEPTH_SAMPLES,
    );
  }

  const report = format({ results, memory, depth, rssByRound, exhausted, loadAfterRounds });
  console.log(report);
  const out = join(root, "bench", "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, `${new Date().toISOString().replaceAll(":", "-")}.json`),
    JSON.stringify(
      {
        argv: process.argv.slice(2),
        results,
        memory,
        depth,
        rssByRound,
        between: Object.fromEntries(servers.map((s) => [s.name, s.between])),
      },
      null,
      2,
    ),
  );
}

function rssOf(server) {
  return {
    workerMb: rssMb(server.pids.worker),
    proxyMb: rssMb(server.pids.proxy),
    nodeMb: rssMb(server.pids.node),
  };
}

function format({ results, memory, depth, rssByRound, exhausted, loadAfterRounds }) {
  const f = (x, d = 0) => (x === undefined ? "" : x.toFixed(d));
  const lines = [
    `${new Date().toISOString()} · ${cpus().length}× ${cpus()[0]?.model} · node ${process.version}`,
    `load average after the rounds ${loadAfterRounds.map((l) => l.toFixed(2)).join(" ")}, at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
    `node bench/run.mjs ${process.argv.slice(2).join(" ")} · ${ROUNDS} interleaved rounds × ${SLICE} s per target · ${CONNECTIONS} connections`,
  ];
  for (const mode of MODES) {
    lines.push(
      "",
      `### ${
        {
          dev: "`wrangler dev` (inspector on), through its proxy",
          direct: "`unstable_startWorker`, inspector off, through the dev proxy",
          socket: "`unstable_startWorker`, inspector off, straight to the Worker's workerd socket (no proxy)",
        }[mode]
      }`,
      "",
      "| target | req/s median (min–max) | p50 ms | p99 ms | ÷ rung req/s | Worker CPU ms/req median (min–max) | ÷ rung CPU | ÷ floor req/s | ÷ floor CPU | ÷ page req/s | ÷ page CPU | ÷ headers req/s | ÷ headers CPU | proxy + node CPU ms/req | statuses |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const r of results.filter((x) => x.mode === mode)) {
      const statuses = Object.entries(r.statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(" ");
      lines.push(
        `| ${r.name} | ${f(r.rps)} (${f(r.rpsMin)}–${f(r.rpsMax)}) | ${f(r.p50, 1)} | ${f(r.p99, 1)} | ${f(r.ratio, 2)} | ${f(r.workerCpuMs, 2)} (${f(r.workerCpuMin, 2)}–${f(r.workerCpuMax, 2)}) | ${f(r.cpuRatio, 2)} | ${f(r.floorRatio, 2)} | ${f(r.floorCpuRatio, 2)} | ${f(r.pageRatio, 2)} | ${f(r.pageCpuRatio, 2)} | ${f(r.headersRatio, 2)} | ${f(r.headersCpuRatio, 2)} | ${f(r.proxyCpuMs, 2)} + ${f(r.nodeCpuMs, 2)} | ${statuses}${r.errors ? `, ${r.errors} errors/timeouts` : ""} |`,
      );
    }
    const inApi = results.filter((x) => x.mode === mode && x.outsideRatio !== undefined);
    if (inApi.length) {
      lines.push(
        "",
        "The same rung in the API's isolate (--in-api) ÷ in the ladder's own process, paired by round:",
        "",
        "| rung | ÷ ladder's req/s | ÷ ladder's CPU | Worker CPU ms/req |",
        "|---|---|---|---|",
        ...inApi.map(
          (r) =>
            `| ${r.name} | ${f(r.outsideRatio, 2)} | ${f(r.outsideCpuRatio, 2)} | ${f(r.workerCpuMs, 2)} |`,
        ),
      );
    }
  }
  lines.push(
    "",
    "Ratios: each API read ÷ the ladder's DO + D1 rung, and ÷ the floor (the same I/O with the SELECT in a D1 session, through hono + zod-openapi); each list also ÷ the page rung (the DO RPC, then a page of 21 projects, answered as they come); the read also ÷ the headers rung (the DO + D1 rung answered with the eleven headers the API's read carries, their values made by no work); POST /v1/projects ÷ the write-batch rung; the transition ÷ the transition rung; the ladder's own rungs and /healthz ÷ the DO + D1 rung. A row marked (no [assets]) is divided by the rung of the ladder without [assets] (--without-assets): neither side crosses the local asset router. A row marked (in the API's isolate) is divided by the rung of that same process (--in-api). A ratio is the median over the rounds of the target's figure ÷ the rung's figure of the same round.",
  );
  const profiled = results.filter((r) => r.allocBytes !== undefined);
  if (profiled.length) {
    const kib = (bytes) => (bytes / 1024).toFixed(1);
    lines.push(
      "",
      "JavaScript allocated per request (`dev` servers, `--alloc`: V8's sampling heap profiler over each slice, collected objects included), and the modules that allocate most:",
      "",
      "| target | KiB/req median (min–max) | ÷ rung | ÷ floor | largest allocators, bytes/req |",
      "|---|---|---|---|---|",
    );
    for (const r of profiled) {
      const top = Object.entries(r.allocByModule)
        .slice(0, 8)
        .map(([m, bytes]) => `${m.replaceAll("|", "\\|")} ${bytes.toFixed(0)}`)
        .join("; ");
      lines.push(
        `| ${r.name} | ${kib(r.allocBytes)} (${kib(Math.min(...r.allocPerRound))}–${kib(Math.max(...r.allocPerRound))}) | ${f(r.allocRatio, 2)} | ${f(r.floorAllocRatio, 2)} | ${top} |`,
      );
    }
  }
  if (exhausted.length) lines.push(`WARNING: seeded deployments ran out on ${exhausted.join(", ")}`);
  const stuck = servers.filter((s) => s.stuck);
  if (stuck.length) {
    lines.push(
      `Warm-up requests not answered within 5 s: ${stuck.map((s) => `${s.name} ${s.stuck}`).join(", ")}`,
    );
  }
  const gaps = servers.filter((s) => s.between?.length);
  if (gaps.length) {
    lines.push(
      "",
      `Between a server's blocks of slices (no requests; an API server waits until ${SETTLE_SECONDS} s after its last request and its process is quiet): the Worker process's CPU, i.e. what its objects' alarms cost:`,
      "",
      "| server | gaps | gap s median | waited s (total) | keys used per block | Worker CPU s per gap median (min–max) | CPU ms per key |",
      "|---|---|---|---|---|---|---|",
    );
    for (const s of gaps) {
      const cpu = s.between.map((g) => g.cpuSeconds);
      const perKey = median(s.between.map((g) => (g.keys ? (1000 * g.cpuSeconds) / g.keys : Number.NaN)));
      lines.push(
        `| ${s.name} | ${s.between.length} | ${f(median(s.between.map((g) => g.seconds)))} | ${f(s.between.reduce((a, g) => a + g.waitedSeconds, 0))} | ${f(median(s.between.map((g) => g.keys)))} | ${f(median(cpu), 2)} (${f(Math.min(...cpu), 2)}–${f(Math.max(...cpu), 2)}) | ${Number.isNaN(perKey) ? "" : f(perKey, 2)} |`,
      );
    }
  }
  lines.push("", "Worker process RSS (MB) after each round:", "");
  lines.push(
    `| round | ${servers.map((s) => s.name).join(" | ")} |`,
    `|---|${servers.map(() => "---").join("|")}|`,
  );
  for (const [i, row] of rssByRound.entries()) {
    lines.push(`| ${i + 1} | ${servers.map((s) => f(row[s.name])).join(" | ")} |`);
  }
  for (const { mode, rows } of memory) {
    lines.push(
      "",
      `Memory, ${mode}: GET /v1/projects/{id} at ${CONNECTIONS} connections for ${MEMORY_SECONDS} s, RSS (MB):`,
      "",
      "| after | requests | Worker workerd | proxy workerd | node |",
      "|---|---|---|---|---|",
      ...rows.map(
        (r) => `| ${r.after} | ${r.requests ?? ""} | ${f(r.workerMb)} | ${f(r.proxyMb)} | ${f(r.nodeMb)} |`,
      ),
    );
  }
  if (depth.length) {
    lines.push(
      "",
      `Pagination depth (${MODES[0]}), ${DEPTH_SAMPLES} sequential requests each, alternating:`,
      "",
      "| target | p50 ms | p99 ms | mean ms |",
      "|---|---|---|---|",
      ...depth.map((d) => `| ${d.name} | ${f(d.p50, 1)} | ${f(d.p99, 1)} | ${f(d.mean, 1)} |`),
    );
  }
  return lines.join("\n");
}

main()
  .catch(async (err) => {
    console.error(err);
    process.exitCode = 1;
    // BENCH_HOLD=<s>: keep the servers up that long after a failure, to look at them.
    if (process.env.BENCH_HOLD)
      await new Promise((r) => setTimeout(r, 1000 * Number(process.env.BENCH_HOLD)));
  })
  .finally(() => {
    clearTimeout(guard);
    cleanUp();
  });
