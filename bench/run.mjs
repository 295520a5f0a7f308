#!/usr/bin/env node
// `npm run bench`: throughput and latency of the API under `wrangler dev` on this machine.
//
//  1. a fresh local state in a temp dir (--persist-to), migrations applied, and an
//     organization with 10,050 projects and 400 keys seeded by SQL (for the depth benchmark);
//  2. `wrangler dev` on 127.0.0.1 (port 8790–8799, first free one; BENCH_PORT to choose);
//  3. through the internal API: a bench organization, its owner, KEYS_PER_ROUTE keys per
//     route and 25 projects;
//  4. autocannon, DURATION seconds per target split over ROUNDS interleaved rounds,
//     CONNECTIONS connections, one key per request
//     in rotation so the limiter (100 / min per key) admits all traffic:
//     GET /healthz (the ceiling), GET /v1/projects/{id}, GET /v1/projects (a 20-item page);
//     then GET /v1/projects?limit=20 on the deep organization, first page vs after 10,000
//     rows, DEPTH_SAMPLES sequential requests each, alternating;
//  5. safe retries and conditional requests (API_CONTRACT §11, §12), CONDITIONAL_SAMPLES
//     sequential requests per target, alternating within each pair: POST /v1/projects without
//     and with an Idempotency-Key (each a new project), and GET /v1/projects/{id} plain and
//     with a matching If-None-Match (answered 304);
//  6. a table on stdout and the raw figures in bench/results/ (git-ignored). Stops by itself.
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { newId, sqlText } from "../scripts/seed-sql.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const DURATION = Number(process.env.DURATION ?? 10);
const DEPTH_SAMPLES = Number(process.env.DEPTH_SAMPLES ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const KEYS_PER_ROUTE = Number(process.env.KEYS_PER_ROUTE ?? 300);
const CONDITIONAL_SAMPLES = Number(process.env.CONDITIONAL_SAMPLES ?? 200);
// Each pool's keys take turns, so no key passes the limiter's 100 per minute.
const CONDITIONAL_KEYS = 50;
// BENCH_ONLY=conditional: only step 5 (no deep seed, no autocannon runs), for a quick comparison.
const ONLY_CONDITIONAL = process.env.BENCH_ONLY === "conditional";
const DEEP_ROWS = 10_050;
const DEEP_KEYS = 400;
const ADMIN_TOKEN = randomBytes(24).toString("hex");
const HARD_TIMEOUT_MS = 10 * 60_000;
// One request that takes this long is a failure of the run, reported as such.
const REQUEST_TIMEOUT_MS = 30_000;

const state = mkdtempSync(join(tmpdir(), "bench-state-"));
let dev;

function cleanUp() {
  // Only the process group this script started.
  if (dev?.pid && dev.exitCode === null) {
    try {
      process.kill(-dev.pid, "SIGTERM");
    } catch {}
  }
  rmSync(state, { recursive: true, force: true });
}
const guard = setTimeout(() => {
  console.error("bench: hard timeout, stopping");
  cleanUp();
  process.exit(2);
}, HARD_TIMEOUT_MS);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

function runWrangler(args) {
  return execFileSync(wrangler, args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
}

const q = sqlText;
const newKey = () => `dpk_${randomBytes(32).toString("base64url")}`;
const sha256 = (s) => createHash("sha256").update(s).digest("hex");

/** The deep organization, written as SQL: owner, DEEP_KEYS keys, DEEP_ROWS projects and their environments. */
function deepSeedSql() {
  const now = Date.now();
  const org = newId();
  const account = newId();
  const iso = (ms) => new Date(ms).toISOString();
  const profile = JSON.stringify({ bio: null, github: null, location: null, twitter: null, website: null });
  const lines = [
    `INSERT INTO organizations (id, name, created_at) VALUES (${q(org)}, 'Deep Org', ${q(iso(now))});`,
    `INSERT INTO accounts (id, name, display_name, avatar, profile, created_at) VALUES (${q(account)}, 'deep-owner', 'Deep Owner', NULL, ${q(profile)}, ${q(iso(now))});`,
    `INSERT INTO org_members (org_id, account_id, role, created_at) VALUES (${q(org)}, ${q(account)}, 'owner', ${q(iso(now))});`,
  ];
  const keys = Array.from({ length: DEEP_KEYS }, newKey);
  for (let i = 0; i < keys.length; i += 200) {
    const rows = keys
      .slice(i, i + 200)
      .map(
        (key) =>
          `(${q(newId())}, ${q(org)}, ${q(account)}, ${q(account)}, 'bench', ${q(sha256(key))}, ${q(iso(now))})`,
      );
    lines.push(
      `INSERT INTO api_keys (id, org_id, account_id, created_by, name, key_hash, created_at) VALUES ${rows.join(",")};`,
    );
  }
  for (let i = 0; i < DEEP_ROWS; i += 200) {
    const projects = [];
    const environments = [];
    for (let j = i; j < Math.min(i + 200, DEEP_ROWS); j++) {
      const id = newId();
      const env = newId();
      const at = q(iso(now - (DEEP_ROWS - j) * 1000));
      projects.push(
        `(${q(id)}, ${q(org)}, 'p${j}', 'p${j}', NULL, NULL, NULL, ${q(env)}, 'connected', ${at}, ${at})`,
      );
      environments.push(`(${q(env)}, ${q(id)}, 'production', ${at})`);
    }
    lines.push(
      `INSERT INTO projects (id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at) VALUES ${projects.join(",")};`,
      `INSERT INTO environments (id, project_id, name, created_at) VALUES ${environments.join(",")};`,
    );
  }
  return { sql: lines.join("\n"), keys };
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function pickPorts() {
  if (process.env.BENCH_PORT) return [Number(process.env.BENCH_PORT), Number(process.env.BENCH_PORT) + 1];
  const free = [];
  for (let port = 8790; port <= 8799 && free.length < 2; port++) if (await portFree(port)) free.push(port);
  if (free.length < 2) throw new Error("no two free ports in 8790–8799");
  return free;
}

async function waitReady(base) {
  for (let i = 0; i < 240; i++) {
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.ok) return;
    } catch {}
    if (dev.exitCode !== null) throw new Error("wrangler dev exited");
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error("wrangler dev did not become ready");
}

async function call(base, method, path, { body, key, admin } = {}) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key) headers["x-api-key"] = key;
  if (admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function inBatches(n, size, make) {
  const out = [];
  for (let i = 0; i < n; i += size) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, j) => make(i + j)))));
  }
  return out;
}

/**
 * One autocannon slice of `duration` s; each request takes the next key of `keys` (when
 * given). Latency samples (ms) of every response are collected so slices can be merged.
 */
function slice(base, path, keys, duration) {
  let next = 0;
  const latencies = [];
  const statuses = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: base,
        connections: CONNECTIONS,
        duration,
        requests: [
          {
            method: "GET",
            path,
            setupRequest: (req) => {
              if (!keys) return req;
              const key = keys[next++ % keys.length];
              return { ...req, headers: { ...req.headers, accept: "application/json", "x-api-key": key } };
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve({ result, latencies, statuses })),
    );
    instance.on("response", (_client, status, _bytes, responseTime) => {
      latencies.push(responseTime);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function summarize(name, slices) {
  const latencies = slices.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = slices.reduce((sum, s) => sum + s.result.duration, 0);
  const total = slices.reduce((sum, s) => sum + s.result.requests.total, 0);
  const sum = (field) => slices.reduce((acc, s) => acc + s.result[field], 0);
  return {
    name,
    rps: total / seconds,
    p50: Number(percentile(latencies, 50).toFixed(1)),
    p99: Number(percentile(latencies, 99).toFixed(1)),
    total,
    seconds: Number(seconds.toFixed(1)),
    statuses: slices.reduce((acc, s) => {
      for (const [status, n] of Object.entries(s.statuses)) acc[status] = (acc[status] ?? 0) + n;
      return acc;
    }, {}),
    errors: sum("errors"),
    timeouts: sum("timeouts"),
    perSliceRps: slices.map((s) => Math.round(s.result.requests.total / s.result.duration)),
  };
}

/**
 * Sequential requests, one target after the other in turn; latency percentiles per target.
 * A target is a GET of `path` answered 200, or gives `init(i)` (method, headers, body) and
 * the `status` it expects.
 */
async function alternate(base, targets, n = DEPTH_SAMPLES) {
  const samples = targets.map(() => []);
  for (let i = 0; i < n; i++) {
    for (const [t, target] of targets.entries()) {
      const key = target.keys[i % target.keys.length];
      const init = target.init?.(i) ?? {};
      const start = performance.now();
      const res = await fetch(`${base}${target.path}`, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        method: init.method ?? "GET",
        body: init.body,
        headers: { accept: "application/json", "x-api-key": key, ...init.headers },
      });
      await res.arrayBuffer();
      if (res.status !== (target.status ?? 200)) throw new Error(`${target.name} → ${res.status}`);
      samples[t].push(performance.now() - start);
    }
  }
  return targets.map((target, t) => {
    const sorted = samples[t].sort((a, b) => a - b);
    return {
      name: target.name,
      samples: sorted.length,
      p50: Number(percentile(sorted, 50).toFixed(1)),
      p99: Number(percentile(sorted, 99).toFixed(1)),
      mean: Number((sorted.reduce((a, b) => a + b, 0) / sorted.length).toFixed(1)),
    };
  });
}

async function main() {
  const [port, inspectorPort] = await pickPorts();
  const base = `http://127.0.0.1:${port}`;
  console.error(`bench: state ${state}, port ${port}`);
  runWrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
  const deep = deepSeedSql();
  let t = Date.now();
  if (!ONLY_CONDITIONAL) {
    const seedFile = join(state, "deep-seed.sql");
    writeFileSync(seedFile, deep.sql);
    runWrangler(["d1", "execute", "DB", "--local", "--persist-to", state, "--file", seedFile, "--yes"]);
    console.error(`bench: seeded ${DEEP_ROWS} projects by SQL in ${Date.now() - t} ms`);
  }

  dev = spawn(
    wrangler,
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      state,
      "--var",
      `ADMIN_TOKEN:${ADMIN_TOKEN}`,
      "--log-level",
      "error",
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    },
  );
  await waitReady(base);

  t = Date.now();
  const org = await call(base, "POST", "/internal/v1/orgs", { admin: true, body: { name: "Bench Org" } });
  const owner = await call(base, "POST", "/internal/v1/accounts", {
    admin: true,
    body: { name: "bench-owner" },
  });
  await call(base, "POST", `/internal/v1/orgs/${org.id}/members`, {
    admin: true,
    body: { account_id: owner.id, role: "owner" },
  });
  const routeKeyCount = ONLY_CONDITIONAL ? 0 : 3 * KEYS_PER_ROUTE;
  const keys = await inBatches(routeKeyCount + 4 * CONDITIONAL_KEYS, 20, async () => {
    const k = await call(base, "POST", `/internal/v1/orgs/${org.id}/api-keys`, {
      admin: true,
      body: { account_id: owner.id, created_by: owner.id },
    });
    return k.key;
  });
  const projects = await inBatches(ONLY_CONDITIONAL ? 1 : 25, 5, (i) =>
    call(base, "POST", "/v1/projects", { key: keys[i], body: { name: `bench-${i}` } }),
  );
  console.error(`bench: created ${keys.length} keys and ${projects.length} projects in ${Date.now() - t} ms`);
  const projectPath = `/v1/projects/${projects[0].id}`;
  const conditionalPools = [0, 1, 2, 3].map((i) =>
    keys.slice(routeKeyCount + i * CONDITIONAL_KEYS, routeKeyCount + (i + 1) * CONDITIONAL_KEYS),
  );
  // Right before each run, every key of its pool once: a key's first use in an isolate looks
  // it up in D1 and records last_used_at; then it stays cached for 30 s. The runs measure
  // the steady state of a busy key.
  const warm = (pool, path) =>
    inBatches(pool.length, 20, async (i) => {
      const res = await fetch(`${base}${path}`, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        headers: { accept: "application/json", "x-api-key": pool[i] },
      });
      await res.arrayBuffer();
      if (res.status === 401 || res.status === 429 || res.status >= 500) {
        throw new Error(`warm-up ${path} → ${res.status}`);
      }
    });
  let results = [];
  let depth = [];
  if (!ONLY_CONDITIONAL) ({ results, depth } = await routeRuns(base, keys, deep, projectPath, warm));
  const conditional = await conditionalRuns(base, keys[0], conditionalPools, projectPath, warm);
  report(results, depth, conditional);
}

/** Step 4: the autocannon runs and the pagination depth. */
async function routeRuns(base, keys, deep, projectPath, warm) {
  // The cursor after exactly 10,000 rows of the deep organization (50 pages of 200).
  let after;
  for (let page = 0; page < 50; page++) {
    const path = `/v1/projects?limit=200${after ? `&after=${encodeURIComponent(after)}` : ""}`;
    after = (await call(base, "GET", path, { key: deep.keys[0] })).next_page;
  }
  const deepPath = `/v1/projects?limit=20&after=${encodeURIComponent(after)}`;
  const deepFirst = await call(base, "GET", deepPath, { key: deep.keys[1] });
  if (deepFirst.data.length !== 20 || deepFirst.data[0].name !== `p${DEEP_ROWS - 10_001}`) {
    throw new Error(`the deep page does not start after row 10,000: ${deepFirst.data[0]?.name}`);
  }

  const routeKeys = keys.slice(0, KEYS_PER_ROUTE);
  const listKeys = keys.slice(KEYS_PER_ROUTE, 2 * KEYS_PER_ROUTE);
  const probeKeys = keys.slice(2 * KEYS_PER_ROUTE, 3 * KEYS_PER_ROUTE);
  const deepKeysA = deep.keys.slice(2, 2 + DEEP_KEYS / 2);
  const deepKeysB = deep.keys.slice(2 + DEEP_KEYS / 2);
  await slice(base, "/healthz", null, 2);

  // ROUNDS rounds, each giving every target DURATION / ROUNDS seconds in turn, so that
  // the load of other processes on this machine falls on all targets alike.
  const targets = [
    { name: "GET /healthz (ceiling)", path: "/healthz", keys: null },
    // Authentication (cached key) and the limiter call, but no D1 query: a 404.
    { name: "GET /v1/no-such-route (auth + limiter, no D1)", path: "/v1/no-such-route", keys: probeKeys },
    { name: "GET /v1/projects/{id}", path: projectPath, keys: routeKeys },
    { name: "GET /v1/projects (20 items)", path: "/v1/projects", keys: listKeys },
  ];
  const slices = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [t, target] of targets.entries()) {
      if (target.keys) await warm(target.keys, target.path);
      slices[t].push(await slice(base, target.path, target.keys, DURATION / ROUNDS));
    }
  }
  const results = targets.map((target, t) => summarize(target.name, slices[t]));

  // Depth: the first page and the page after 10,000 rows, requested alternately one at a
  // time, so both see the same background load; DEPTH_SAMPLES latencies each.
  await warm(deepKeysA, "/v1/projects?limit=20");
  await warm(deepKeysB, deepPath);
  const depth = await alternate(base, [
    { name: "deep org: first page (limit 20)", path: "/v1/projects?limit=20", keys: deepKeysA },
    { name: "deep org: page after 10,000 rows (limit 20)", path: deepPath, keys: deepKeysB },
  ]);

  return { results, depth };
}

/** Step 5: safe retries and conditional requests; each pair alternates request by request. */
async function conditionalRuns(base, anyKey, conditionalPools, projectPath, warm) {
  for (const pool of conditionalPools) await warm(pool, projectPath);
  const run = randomBytes(4).toString("hex");
  const create = (tag, withKey) => (i) => ({
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(withKey ? { "idempotency-key": `bench-${run}-${i}` } : {}),
    },
    body: JSON.stringify({ name: `bench-${run}-${tag}-${i}` }),
  });
  const tagged = await fetch(`${base}${projectPath}`, { headers: { "x-api-key": anyKey } });
  await tagged.arrayBuffer();
  const etag = tagged.headers.get("etag");
  return [
    ...(await alternate(
      base,
      [
        {
          name: "POST /v1/projects",
          path: "/v1/projects",
          keys: conditionalPools[0],
          init: create("plain", false),
          status: 201,
        },
        {
          name: "POST /v1/projects with Idempotency-Key",
          path: "/v1/projects",
          keys: conditionalPools[1],
          init: create("keyed", true),
          status: 201,
        },
      ],
      CONDITIONAL_SAMPLES,
    )),
    ...(await alternate(
      base,
      [
        { name: "GET /v1/projects/{id}", path: projectPath, keys: conditionalPools[2] },
        {
          name: "GET /v1/projects/{id}, If-None-Match → 304",
          path: projectPath,
          keys: conditionalPools[3],
          init: () => ({ headers: { "if-none-match": etag } }),
          status: 304,
        },
      ],
      CONDITIONAL_SAMPLES,
    )),
  ];
}

function report(results, depth, conditional) {
  const ceiling = results[0]?.rps ?? 1;
  const fmt = (r) =>
    `| ${r.name} | ${r.rps.toFixed(0)} (${r.perSliceRps.join(", ")}) | ${r.p50} | ${r.p99} | ${(r.rps / ceiling).toFixed(2)} | ${r.total} | ${Object.entries(
      r.statuses,
    )
      .map(([status, n]) => `${status}×${n}`)
      .join(" ")}${r.errors + r.timeouts ? `, ${r.errors} errors, ${r.timeouts} timeouts` : ""} |`;
  const header =
    "| target | req/s (per round) | p50 ms | p99 ms | ÷ ceiling | requests | statuses |\n|---|---|---|---|---|---|---|";
  const report = [
    `${new Date().toISOString()} · ${cpus().length}× ${cpus()[0]?.model} · node ${process.version} · load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
    ...(results.length === 0
      ? []
      : [
          `connections ${CONNECTIONS}, ${DURATION} s per route in ${ROUNDS} rounds of ${DURATION / ROUNDS} s`,
          "",
          header,
          ...results.map(fmt),
          "",
          `pagination depth: ${DEPTH_SAMPLES} sequential requests per target, alternating`,
          "",
          "| target | p50 ms | p99 ms | mean ms |\n|---|---|---|---|",
          ...depth.map((d) => `| ${d.name} | ${d.p50} | ${d.p99} | ${d.mean} |`),
        ]),
    "",
    `safe retries and conditional requests: ${CONDITIONAL_SAMPLES} sequential requests per target, alternating in pairs`,
    "",
    "| target | p50 ms | p99 ms | mean ms |\n|---|---|---|---|",
    ...conditional.map((d) => `| ${d.name} | ${d.p50} | ${d.p99} | ${d.mean} |`),
  ].join("\n");
  console.log(report);
  const out = join(root, "bench", "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, `${new Date().toISOString().replaceAll(":", "-")}.json`),
    JSON.stringify({ results, depth, conditional }, null, 2),
  );
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    clearTimeout(guard);
    cleanUp();
  });
