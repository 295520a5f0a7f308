#!/usr/bin/env node
// `node bench/conditional.mjs`: what safe retries and conditional requests (API_CONTRACT §11,
// §12) cost, side by side in one run on this machine. See bench/README.md, "Safe retries and
// conditional requests".
//
//  1. one local state (temp dir): migrations applied, seeded by SQL (bench/seed.mjs);
//  2. the API on 127.0.0.1 (first free port of 8790–8799) through bench/start-worker.mjs
//     (wrangler's `unstable_startWorker`, inspector off), on a snapshot of src/;
//  3. four pools of CONDITIONAL_KEYS keys, each key used once first (its lookup and first
//     limiter call out of the way); then CONDITIONAL_SAMPLES sequential requests per target,
//     alternating request by request within each pair, so both sides of a pair see the same
//     background load:
//     - POST /v1/projects without and with a fresh Idempotency-Key (each creates a project);
//     - GET /v1/projects/{id} plain and with an If-None-Match of its current ETag (304);
//  4. a table on stdout, raw figures in bench/results/ (git-ignored). Stops by itself.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CHILD_ENV, percentile, portFree, stopOnTimeoutOrSignal, wranglerRunner } from "./lib.mjs";
import { seedSql } from "./seed.mjs";

const SAMPLES = Number(process.env.CONDITIONAL_SAMPLES ?? 200);
// Each pool's keys take turns, so no key passes its policy's limit per minute.
const POOL = Number(process.env.CONDITIONAL_KEYS ?? 50);
const HARD_TIMEOUT_MS = 10 * 60_000;
// One request that takes this long is a failure of the run, reported as such.
const REQUEST_TIMEOUT_MS = 30_000;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const ADMIN_TOKEN = randomBytes(24).toString("hex");
const childEnv = CHILD_ENV;
const tmp = mkdtempSync(join(tmpdir(), "bench-conditional-"));
let child;

function cleanUp() {
  // Only the process group this script started.
  if (child?.pid && child.exitCode === null) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
  }
  rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}
const guard = stopOnTimeoutOrSignal("bench/conditional", HARD_TIMEOUT_MS, cleanUp);

const runWrangler = wranglerRunner(wrangler, root);

async function freePort() {
  for (let port = 8790; port <= 8799; port++) if (await portFree(port)) return port;
  throw new Error("no free port in 8790–8799");
}

async function waitReady(base) {
  for (let i = 0; i < 240; i++) {
    try {
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {}
    if (child.exitCode !== null) throw new Error("the Worker exited");
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error("the Worker did not become ready");
}

async function send(base, key, path, init = {}) {
  const res = await fetch(`${base}${path}`, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    method: init.method ?? "GET",
    body: init.body,
    headers: { accept: "application/json", "x-api-key": key, ...init.headers },
  });
  await res.arrayBuffer();
  return res;
}

/** A percentile, to 0.1 ms. */
const percentile1 = (sorted, p) => Math.round(percentile(sorted, p) * 10) / 10;

/** Sequential requests, one target after the other in turn; latency percentiles per target. */
async function alternate(base, targets) {
  const samples = targets.map(() => []);
  for (let i = 0; i < SAMPLES; i++) {
    for (const [t, target] of targets.entries()) {
      const start = performance.now();
      const res = await send(base, target.keys[i % target.keys.length], target.path, target.init?.(i));
      if (res.status !== (target.status ?? 200)) throw new Error(`${target.name} → ${res.status}`);
      samples[t].push(performance.now() - start);
    }
  }
  return targets.map((target, t) => {
    const sorted = samples[t].sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    return {
      name: target.name,
      p50: percentile1(sorted, 50),
      p99: percentile1(sorted, 99),
      mean: Math.round(mean * 10) / 10,
    };
  });
}

async function main() {
  runWrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", join(tmp, "state")]);
  const seed = seedSql({ keyCount: 4 * POOL, deploymentCount: 0 });
  writeFileSync(join(tmp, "seed.sql"), seed.sql);
  runWrangler([
    "d1",
    "execute",
    "DB",
    "--local",
    "--persist-to",
    join(tmp, "state"),
    "--file",
    join(tmp, "seed.sql"),
    "--yes",
  ]);
  // A snapshot of src/, so editing the working tree during a run changes nothing.
  const app = join(tmp, "app");
  mkdirSync(app);
  cpSync(join(root, "src"), join(app, "src"), { recursive: true });
  cpSync(join(root, "wrangler.toml"), join(app, "wrangler.toml"));
  symlinkSync(join(root, "node_modules"), join(app, "node_modules"));
  // wrangler.toml's [build] step and [assets] directory (the /docs renderer), in the snapshot.
  mkdirSync(join(app, "scripts"));
  cpSync(join(root, "scripts", "docs-assets.mjs"), join(app, "scripts", "docs-assets.mjs"));
  cpSync(join(root, "package.json"), join(app, "package.json"));
  execFileSync(process.execPath, [join(app, "scripts", "docs-assets.mjs")], { cwd: app, stdio: "ignore" });
  const port = await freePort();
  const argv = [join(root, "bench", "start-worker.mjs"), join(app, "wrangler.toml"), String(port)];
  child = spawn(process.execPath, [...argv, join(tmp, "state"), `ADMIN_TOKEN=${ADMIN_TOKEN}`], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "ignore", "inherit"],
    env: childEnv,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base);

  const pools = [0, 1, 2, 3].map((i) => seed.bench.keys.slice(i * POOL, (i + 1) * POOL));
  const projectPath = `/v1/projects/${seed.bench.project.id}`;
  for (const pool of pools) {
    for (const key of pool) {
      const res = await send(base, key, projectPath);
      if (res.status !== 200) throw new Error(`warm-up ${projectPath} → ${res.status}`);
    }
  }
  const run = randomBytes(4).toString("hex");
  const create = (tag, withKey) => (i) => ({
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(withKey ? { "idempotency-key": `bench-${run}-${i}` } : {}),
    },
    body: JSON.stringify({ name: `bench-${run}-${tag}-${i}` }),
  });
  const etag = (await send(base, pools[2][0], projectPath)).headers.get("etag");
  const results = [
    ...(await alternate(base, [
      {
        name: "POST /v1/projects",
        path: "/v1/projects",
        keys: pools[0],
        init: create("plain", false),
        status: 201,
      },
      {
        name: "POST /v1/projects with Idempotency-Key",
        path: "/v1/projects",
        keys: pools[1],
        init: create("keyed", true),
        status: 201,
      },
    ])),
    ...(await alternate(base, [
      { name: "GET /v1/projects/{id}", path: projectPath, keys: pools[2] },
      {
        name: "GET /v1/projects/{id}, If-None-Match → 304",
        path: projectPath,
        keys: pools[3],
        init: () => ({ headers: { "if-none-match": etag } }),
        status: 304,
      },
    ])),
  ];

  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  console.log(
    [
      `${new Date().toISOString()} · ${cpus().length}× ${cpus()[0]?.model} · node ${process.version} · load average at end ${load}`,
      `${SAMPLES} sequential requests per target, alternating in pairs; pools of ${POOL} warm keys`,
      "",
      "| target | p50 ms | p99 ms | mean ms |\n|---|---|---|---|",
      ...results.map((r) => `| ${r.name} | ${r.p50} | ${r.p99} | ${r.mean} |`),
    ].join("\n"),
  );
  const out = join(root, "bench", "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, `conditional-${new Date().toISOString().replaceAll(":", "-")}.json`),
    JSON.stringify({ samples: SAMPLES, pool: POOL, results }, null, 2),
  );
}

main()
  .then(() => {
    clearTimeout(guard);
    cleanUp();
  })
  .catch((err) => {
    console.error(err);
    cleanUp();
    process.exit(1);
  });
