#!/usr/bin/env node
// `node bench/keys.mjs`: does throughput hold as the traffic spreads over more keys, and does
// any one limiter object (one per API key) take a dominating share of the requests?
//
//  1. a fresh local state in a temp dir (--persist-to), migrations applied, and seeded by SQL:
//     for each key count N of KEY_COUNTS (1, 100, 1000) and each of the two targets below, its
//     own N keys spread over min(N, ORGS) organizations (each with an owner and one project),
//     so no two measurements share a key or a rate-limit window;
//  2. `wrangler dev` on 127.0.0.1 (first free port of 8800–8819, KEYS_BENCH_PORT to choose);
//  3. before each slice, every key of its pool used once (a key's first use in an isolate, and
//     its next use once its 30 s cache entry expired, is a D1 lookup);
//  4. per target and N, autocannon for DURATION s (split over ROUNDS rounds interleaved with
//     the other N, default 1), CONNECTIONS connections, each request taking the next key in rotation:
//     - "limiter path": GET /v1/no-such-route (authentication, the key's limiter object, 404;
//       no D1), the path every request takes;
//     - "read/write mix": 9 × GET /v1/projects/{the key's org's project} to 1 × POST /v1/projects
//       (a write: the primary session, then the bookmark stored in the key's object);
//  5. per object, the count the object itself keeps: `X-Ratelimit-Limit − X-Ratelimit-Remaining`
//     on a response is the number of requests that object has admitted in its window, so the
//     highest minus the lowest value seen per key, plus one, is that object's count of the
//     slice's requests (see objectCounter); refusals (429) are counted per key too;
//  6. tables on stdout, raw figures in bench/results/ (git-ignored); wrangler dev stopped and the
//     temp dir removed. Stops by itself (hard limit HARD_TIMEOUT_S, default 6 min).
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { newId, sqlText as q } from "../scripts/seed-sql.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const KEY_COUNTS = (process.env.KEY_COUNTS ?? "1,100,1000").split(",").map(Number);
const ORGS = Number(process.env.ORGS ?? 100);
const DURATION = Number(process.env.DURATION ?? 8);
// One round by default: an object's count is read within one 60 s window (objectCounter), so
// with ROUNDS > 1 the per-object figures are only right while all rounds fit in 60 s.
const ROUNDS = Number(process.env.ROUNDS ?? 1);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const WARM_CONCURRENCY = 20;
const WARM_TIMEOUT_MS = 20_000;
const HARD_TIMEOUT_MS = Number(process.env.HARD_TIMEOUT_S ?? 360) * 1000;
const ADMIN_TOKEN = randomBytes(24).toString("hex");
const ALL_TARGETS = ["limiter path", "read/write mix"];
const TARGETS = process.env.TARGETS ? process.env.TARGETS.split(",") : ALL_TARGETS;
if (TARGETS.some((t) => !ALL_TARGETS.includes(t)))
  throw new Error(`TARGETS: some of ${ALL_TARGETS.join(",")}`);

if (KEY_COUNTS.some((n) => !Number.isInteger(n) || n < 1 || n > 5000)) {
  throw new Error("KEY_COUNTS: integers from 1 to 5000");
}

const state = mkdtempSync(join(tmpdir(), "bench-keys-"));
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
  console.error("bench/keys: hard timeout, stopping");
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

const sha256 = (s) => createHash("sha256").update(s).digest("hex");

/**
 * One key pool: `n` keys over min(n, ORGS) organizations, each organization with an owner and
 * one project. Returns the SQL and, per key, its secret, its id and its organization's project.
 */
function poolSql(n, label) {
  const now = new Date().toISOString();
  const profile = JSON.stringify({ bio: null, github: null, location: null, twitter: null, website: null });
  const orgs = Array.from({ length: Math.min(n, ORGS) }, (_, i) => ({
    id: newId(),
    owner: newId(),
    project: newId(),
    environment: newId(),
    name: `${label}-org-${i}`,
  }));
  const lines = [];
  for (const org of orgs) {
    lines.push(
      `INSERT INTO organizations (id, name, created_at) VALUES (${q(org.id)}, ${q(org.name)}, ${q(now)});`,
      `INSERT INTO accounts (id, name, display_name, avatar, profile, created_at) VALUES (${q(org.owner)}, ${q(`${org.name}-owner`)}, 'Owner', NULL, ${q(profile)}, ${q(now)});`,
      `INSERT INTO org_members (org_id, account_id, role, created_at) VALUES (${q(org.id)}, ${q(org.owner)}, 'owner', ${q(now)});`,
      `INSERT INTO projects (id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at) VALUES (${q(org.project)}, ${q(org.id)}, 'p', 'p', NULL, NULL, NULL, ${q(org.environment)}, 'connected', ${q(now)}, ${q(now)});`,
      `INSERT INTO environments (id, project_id, name, created_at) VALUES (${q(org.environment)}, ${q(org.project)}, 'production', ${q(now)});`,
    );
  }
  const keys = Array.from({ length: n }, (_, i) => {
    const org = orgs[i % orgs.length];
    return { secret: `dpk_${randomBytes(32).toString("base64url")}`, id: newId(), org };
  });
  for (let i = 0; i < keys.length; i += 200) {
    const rows = keys
      .slice(i, i + 200)
      .map(
        (k) =>
          `(${q(k.id)}, ${q(k.org.id)}, ${q(k.org.owner)}, ${q(k.org.owner)}, 'bench', ${q(sha256(k.secret))}, ${q(now)})`,
      );
    lines.push(
      `INSERT INTO api_keys (id, org_id, account_id, created_by, name, key_hash, created_at) VALUES ${rows.join(",")};`,
    );
  }
  return { sql: lines.join("\n"), keys, orgs: orgs.length };
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function pickPorts() {
  if (process.env.KEYS_BENCH_PORT) {
    return [Number(process.env.KEYS_BENCH_PORT), Number(process.env.KEYS_BENCH_PORT) + 1];
  }
  const free = [];
  for (let port = 8800; port <= 8819 && free.length < 2; port++) if (await portFree(port)) free.push(port);
  if (free.length < 2) throw new Error("no two free ports in 8800–8819");
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

/**
 * Uses every key of the pool once, WARM_CONCURRENCY at a time, right before its slice: a key's
 * first use in an isolate (and again once its 30 s cache entry is gone) is a D1 lookup, so the
 * slice measures keys in use, not the cold start of a thousand keys at once.
 */
async function warm(base, pool) {
  const t = Date.now();
  let failed = 0;
  for (let i = 0; i < pool.keys.length; i += WARM_CONCURRENCY) {
    await Promise.all(
      pool.keys.slice(i, i + WARM_CONCURRENCY).map(async (k) => {
        try {
          const res = await fetch(`${base}/v1/no-such-route`, {
            headers: { "x-api-key": k.secret },
            signal: AbortSignal.timeout(WARM_TIMEOUT_MS),
          });
          await res.arrayBuffer();
          if (res.status !== 404 && res.status !== 429) failed++;
        } catch {
          failed++;
        }
      }),
    );
  }
  console.error(
    `bench/keys: warmed ${pool.keys.length} keys in ${Date.now() - t} ms${failed ? ` (${failed} failed or timed out)` : ""}`,
  );
}

/**
 * Per key, the lowest and the highest count its object reported on the slice's responses, and
 * the slice's refusals. Within one slice no counted request leaves the 60 s window except, at
 * most, the key's warm-up request, so `highest − lowest + 1` is the number of requests the object
 * admitted during the slice (one less when the warm-up entry expired meanwhile).
 */
function objectCounter() {
  const lowest = new Map();
  const highest = new Map();
  const refused = new Map();
  return {
    record(keyId, status, rawHeaders) {
      const headers = Object.fromEntries(Object.entries(rawHeaders).map(([k, v]) => [k.toLowerCase(), v]));
      const limit = Number(headers["x-ratelimit-limit"]);
      const remaining = Number(headers["x-ratelimit-remaining"]);
      if (status === 429) refused.set(keyId, (refused.get(keyId) ?? 0) + 1);
      else if (Number.isFinite(limit) && Number.isFinite(remaining)) {
        const count = limit - remaining;
        lowest.set(keyId, Math.min(lowest.get(keyId) ?? count, count));
        highest.set(keyId, Math.max(highest.get(keyId) ?? count, count));
      }
    },
    /** Requests of the slices this key's object handled: admitted by its own count, plus refused. */
    handled(keyId) {
      const admitted = highest.has(keyId) ? highest.get(keyId) - lowest.get(keyId) + 1 : 0;
      return admitted + (refused.get(keyId) ?? 0);
    },
  };
}

/** One autocannon slice over `pool` for `target`; every response is attributed to its key. */
function slice(base, target, pool, duration, counter) {
  let next = 0;
  const latencies = [];
  const statuses = {};
  const request = {
    setupRequest: (req, context) => {
      const n = next++;
      const key = pool.keys[n % pool.keys.length];
      context.keyId = key.id;
      const headers = { ...req.headers, accept: "application/json", "x-api-key": key.secret };
      if (target === "limiter path") return { ...req, method: "GET", path: "/v1/no-such-route", headers };
      if (n % 10 === 9) {
        return {
          ...req,
          method: "POST",
          path: "/v1/projects",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ name: `w-${randomBytes(6).toString("hex")}` }),
        };
      }
      return { ...req, method: "GET", path: `/v1/projects/${key.org.project}`, headers, body: undefined };
    },
    onResponse: (status, _body, context, headers) => counter.record(context.keyId, status, headers),
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: base, connections: CONNECTIONS, duration, requests: [request] },
      (err, result) => (err ? reject(err) : resolve({ result, latencies, statuses })),
    );
    instance.on("response", (_client, status, _bytes, responseTime) => {
      latencies.push(responseTime);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function summarize(target, n, pool, slices, counter) {
  const latencies = slices.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = slices.reduce((sum, s) => sum + s.result.duration, 0);
  const total = slices.reduce((sum, s) => sum + s.result.requests.total, 0);
  const statuses = {};
  for (const s of slices)
    for (const [k, v] of Object.entries(s.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const perObject = pool.keys.map((k) => counter.handled(k.id));
  const counted = perObject.reduce((a, b) => a + b, 0);
  const max = Math.max(...perObject);
  const touched = perObject.filter((c) => c > 0).length;
  return {
    target,
    keys: n,
    orgs: pool.orgs,
    rps: total / seconds,
    perRoundRps: slices.map((s) => Math.round(s.result.requests.total / s.result.duration)),
    p50: Number(percentile(latencies, 50).toFixed(1)),
    p99: Number(percentile(latencies, 99).toFixed(1)),
    total,
    statuses,
    errors: slices.reduce((sum, s) => sum + s.result.errors + s.result.timeouts, 0),
    objectsTouched: touched,
    counted,
    maxPerObject: max,
    meanPerObject: counted / Math.max(1, touched),
    maxShare: counted ? max / counted : 0,
  };
}

async function main() {
  const [port, inspectorPort] = await pickPorts();
  const base = `http://127.0.0.1:${port}`;
  console.error(`bench/keys: state ${state}, port ${port}`);
  runWrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
  const pools = new Map();
  const sql = [];
  for (const target of TARGETS) {
    for (const n of KEY_COUNTS) {
      const pool = poolSql(n, `${target === "limiter path" ? "l" : "m"}${n}`);
      pools.set(`${target}|${n}`, pool);
      sql.push(pool.sql);
    }
  }
  const seedFile = join(state, "keys-seed.sql");
  writeFileSync(seedFile, sql.join("\n"));
  const t = Date.now();
  runWrangler(["d1", "execute", "DB", "--local", "--persist-to", state, "--file", seedFile, "--yes"]);
  const totalKeys = [...pools.values()].reduce((sum, p) => sum + p.keys.length, 0);
  console.error(`bench/keys: seeded ${totalKeys} keys by SQL in ${Date.now() - t} ms`);

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

  const results = [];
  for (const target of TARGETS) {
    const slices = new Map(KEY_COUNTS.map((n) => [n, []]));
    const counters = new Map(KEY_COUNTS.map((n) => [n, objectCounter()]));
    const perRound = DURATION / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      for (const n of KEY_COUNTS) {
        const pool = pools.get(`${target}|${n}`);
        await warm(base, pool);
        slices.get(n).push(await slice(base, target, pool, perRound, counters.get(n)));
      }
    }
    for (const n of KEY_COUNTS) {
      results.push(summarize(target, n, pools.get(`${target}|${n}`), slices.get(n), counters.get(n)));
    }
  }

  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.versions.node}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;
  const fmtStatuses = (s) =>
    Object.entries(s)
      .map(([k, v]) => `${k}×${v}`)
      .join(" ");
  const lines = [
    `bench/keys — ${new Date().toISOString()} — ${machine}`,
    `${DURATION} s per row in ${ROUNDS} interleaved rounds, ${CONNECTIONS} connections`,
    "",
    "| target | keys (orgs) | req/s (per round) | p50 ms | p99 ms | requests | statuses | objects used | max / mean per object | max share |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...results.map(
      (r) =>
        `| ${r.target} | ${r.keys} (${r.orgs}) | ${Math.round(r.rps)} (${r.perRoundRps.join(", ")}) | ${r.p50} | ${r.p99} | ${r.total} | ${fmtStatuses(r.statuses)} | ${r.objectsTouched} | ${r.maxPerObject} / ${r.meanPerObject.toFixed(1)} | ${(100 * r.maxShare).toFixed(1)}% |`,
    ),
  ];
  console.log(lines.join("\n"));
  const out = join(root, "bench", "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, `keys-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    JSON.stringify({ machine, DURATION, ROUNDS, CONNECTIONS, results }, null, 2),
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
