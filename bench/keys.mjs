#!/usr/bin/env node
// `node bench/keys.mjs`: does throughput hold as the traffic spreads over more limiter objects
// (one per API key, one per client IP for failed authentications), and does any one object take
// a dominating share of the requests? Local only (127.0.0.1), bounded in count and time.
//
//  1. a fresh local state in a temp dir (--persist-to), migrations applied, and seeded by SQL:
//     for each N of KEY_COUNTS (1, 100, 1000) and each keyed target, its own N keys spread over
//     min(N, ORGS) organizations (each with an owner and one project), so no two measurements
//     share a key or a rate-limit window;
//  2. `wrangler dev` on 127.0.0.1 (first free port of 8800–8819, KEYS_BENCH_PORT to choose);
//  3. ROUNDS rounds (default 3); in each, per target and N in turn: a warm-up that sends one
//     request per key (or IP) of the pool, CONNECTIONS at a time ("first use": every key and
//     object new to the isolate in round 1, the key lookup again once its 30 s cache entry has
//     lapsed), then an autocannon pass of DURATION s, CONNECTIONS connections, each request
//     taking the next key of the whole pool in rotation ("in use": every key and object warm).
//     The rate limits are lifted for the bench (`--var RATE_LIMITS`), so every request of every
//     row is admitted and does the same work (an admitted request writes to its object's
//     SQLite; a refused one does not, which made the 1-object rows of earlier runs incomparable);
//     targets:
//     - "per-IP objects": GET /v1/no-such-route with a malformed key from N client IPs
//       (CF-Connecting-IP in 198.18.0.0/15, which wrangler dev passes through): refused (401)
//       without any D1 query, counted by that IP's limiter object: nothing but the object call,
//       so it isolates the cost of spreading over objects;
//     - "per-key objects": GET /v1/no-such-route with a valid key (authentication, the key's
//       object, 404): adds the key lookup of each key's first use in the isolate (cached 30 s);
//     - "read/write mix": 9 × GET /v1/projects/{the key's org's project} to 1 × POST /v1/projects
//       (a write: the primary session, then the bookmark stored in the key's object);
//  4. per object, the requests it handled: each request names its key (or IP), and the limiter
//     object is chosen by that name (src/rate-limit/limiter.ts), so the client's count per key is
//     the object's; the object's own count (X-Ratelimit-Limit − X-Ratelimit-Remaining) is checked
//     against it on every response of the first round (it must be at least the client's count
//     for the pass, as the window is longer than a pass);
//     req/s per (target, N) is the median over the rounds, with min–max, and its ratio to N = 1;
//  5. a table on stdout, raw figures in bench/results/ (git-ignored); wrangler dev stopped and
//     the temp dir removed. Stops by itself (hard limit HARD_TIMEOUT_S, default 10 min).
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { newId, sqlText as q } from "../scripts/seed-sql.mjs";
import { CHILD_ENV, freePorts, median, percentile, stopOnTimeoutOrSignal, wranglerRunner } from "./lib.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const KEY_COUNTS = (process.env.KEY_COUNTS ?? "1,100,1000").split(",").map(Number);
const ORGS = Number(process.env.ORGS ?? 100);
const DURATION = Number(process.env.DURATION ?? 8);
// Every request admitted: the same work per request in every row (see 3. above).
const LIFTED_LIMITS = JSON.stringify({
  default: 1_000_000,
  reveal: 1_000_000,
  "orgs-create": 1_000_000,
  anonymous: 1_000_000,
});
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const HARD_TIMEOUT_MS = Number(process.env.HARD_TIMEOUT_S ?? 900) * 1000;
const ADMIN_TOKEN = randomBytes(24).toString("hex");
const ALL_TARGETS = ["per-IP objects", "per-key objects", "read/write mix"];
const ROUNDS = Number(process.env.ROUNDS ?? 3);
// A warm-up request not answered by then is counted as "timeout" (and the run goes on).
const WARM_UP_TIMEOUT_MS = 30_000;
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
  // workerd may still be flushing object storage for a moment after the signal.
  rmSync(state, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}
const guard = stopOnTimeoutOrSignal("bench/keys", HARD_TIMEOUT_MS, cleanUp);

const runWrangler = wranglerRunner(wrangler, root);

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

async function pickPorts() {
  if (process.env.KEYS_BENCH_PORT) {
    return [Number(process.env.KEYS_BENCH_PORT), Number(process.env.KEYS_BENCH_PORT) + 1];
  }
  return freePorts(8800, 8819, 2);
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
 * Per object (key or IP): the requests the client sent it (each request names its key, and the
 * limiter object is chosen by that name) and the object's own count, `X-Ratelimit-Limit −
 * X-Ratelimit-Remaining`, the highest it reported. The window (60 s) is longer than a pass, so
 * an object whose own count is below the client's count has lost requests: `mismatches` counts
 * such objects, and must be 0.
 */
function objectCounter() {
  const sent = new Map();
  const ownCount = new Map();
  return {
    record(keyId, rawHeaders) {
      sent.set(keyId, (sent.get(keyId) ?? 0) + 1);
      const headers = Object.fromEntries(Object.entries(rawHeaders).map(([k, v]) => [k.toLowerCase(), v]));
      const count = Number(headers["x-ratelimit-limit"]) - Number(headers["x-ratelimit-remaining"]);
      if (Number.isFinite(count)) ownCount.set(keyId, Math.max(ownCount.get(keyId) ?? 0, count));
    },
    handled: (keyId) => sent.get(keyId) ?? 0,
    mismatches: () => [...sent].filter(([keyId, n]) => (ownCount.get(keyId) ?? 0) < n).length,
  };
}

/** The request of the `n`-th use of `pool` for `target`: method, path, headers, body. */
function requestFor(target, pool, n) {
  const key = pool.keys[n % pool.keys.length];
  if (target === "per-IP objects") {
    return {
      keyId: key.id,
      method: "GET",
      path: "/v1/no-such-route",
      headers: { accept: "application/json", "x-api-key": "dpk_malformed", "cf-connecting-ip": key.id },
    };
  }
  const headers = { accept: "application/json", "x-api-key": key.secret };
  if (target === "per-key objects")
    return { keyId: key.id, method: "GET", path: "/v1/no-such-route", headers };
  if (n % 10 === 9) {
    return {
      keyId: key.id,
      method: "POST",
      path: "/v1/projects",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: `w-${randomBytes(6).toString("hex")}` }),
    };
  }
  return { keyId: key.id, method: "GET", path: `/v1/projects/${key.org.project}`, headers };
}

/** One request per key of the pool, CONNECTIONS at a time; returns the rate it went at. */
async function warmUp(base, target, pool) {
  let next = 0;
  const started = performance.now();
  const statuses = {};
  const worker = async () => {
    for (let n = next++; n < pool.keys.length; n = next++) {
      const r = requestFor(target, pool, n);
      const status = await fetch(`${base}${r.path}`, {
        method: r.method,
        headers: r.headers,
        body: r.body,
        signal: AbortSignal.timeout(WARM_UP_TIMEOUT_MS),
      })
        .then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        })
        .catch((err) => (err.name === "TimeoutError" ? "timeout" : "error"));
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONNECTIONS, pool.keys.length) }, worker));
  return { rps: pool.keys.length / ((performance.now() - started) / 1000), statuses };
}

/** One autocannon pass over the whole pool for `target`; every response is attributed to its key. */
function slice(base, target, pool, duration, counter) {
  let next = 0;
  const latencies = [];
  const statuses = {};
  const request = {
    setupRequest: (req, context) => {
      const r = requestFor(target, pool, next++);
      context.keyId = r.keyId;
      return {
        ...req,
        method: r.method,
        path: r.path,
        headers: { ...req.headers, ...r.headers },
        body: r.body,
      };
    },
    onResponse: (_status, _body, context, headers) => counter.record(context.keyId, headers),
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

function summarize(pool, run, counter, warm) {
  const perObject = pool.keys.map((k) => counter.handled(k.id));
  const counted = perObject.reduce((a, b) => a + b, 0);
  const max = Math.max(...perObject);
  return {
    rps: run.result.requests.total / run.result.duration,
    warmRps: warm.rps,
    latencies: run.latencies,
    statuses: run.statuses,
    warmStatuses: warm.statuses,
    errors: run.result.errors + run.result.timeouts,
    objectsUsed: perObject.filter((c) => c > 0).length,
    maxPerObject: max,
    meanPerObject: counted / Math.max(1, perObject.filter((c) => c > 0).length),
    maxShare: counted ? max / counted : 0,
    mismatches: counter.mismatches(),
  };
}

/** N client IPs of the benchmarking range 198.18.0.0/15 (RFC 2544), as a pool of "keys". */
function ipPool(n) {
  const keys = Array.from({ length: n }, (_, i) => ({
    id: `198.18.${Math.floor(i / 250)}.${(i % 250) + 1}`,
  }));
  return { keys, orgs: 0 };
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
      if (target === "per-IP objects") {
        pools.set(`${target}|${n}`, ipPool(n));
        continue;
      }
      const pool = poolSql(n, `${target === "per-key objects" ? "k" : "m"}${n}`);
      pools.set(`${target}|${n}`, pool);
      sql.push(pool.sql);
    }
  }
  const seedFile = join(state, "keys-seed.sql");
  writeFileSync(seedFile, sql.join("\n"));
  const t = Date.now();
  runWrangler(["d1", "execute", "DB", "--local", "--persist-to", state, "--file", seedFile, "--yes"]);
  const totalKeys = [...pools.values()].reduce((sum, p) => sum + (p.orgs ? p.keys.length : 0), 0);
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
      "--var",
      `RATE_LIMITS:${LIFTED_LIMITS}`,
      "--log-level",
      "error",
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "ignore", "inherit"],
      env: CHILD_ENV,
    },
  );
  await waitReady(base);

  // Rounds interleave the pool sizes, so that all of them see the same machine.
  const runs = new Map();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const target of TARGETS) {
      for (const n of KEY_COUNTS) {
        const pool = pools.get(`${target}|${n}`);
        const warm = await warmUp(base, target, pool);
        const counter = objectCounter();
        const run = await slice(base, target, pool, DURATION, counter);
        const result = summarize(pool, run, counter, warm);
        runs.set(`${target}|${n}`, [...(runs.get(`${target}|${n}`) ?? []), result]);
        console.error(
          `bench/keys: round ${round}, ${target}, ${n}: warm-up ${Math.round(warm.rps)} req/s, in use ${Math.round(result.rps)} req/s`,
        );
      }
    }
  }

  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.versions.node}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;
  const sum = (objects) => {
    const out = {};
    for (const o of objects) for (const [k, v] of Object.entries(o)) out[k] = (out[k] ?? 0) + v;
    return Object.entries(out)
      .map(([k, v]) => `${k}×${v}`)
      .join(" ");
  };
  const rows = [];
  for (const target of TARGETS) {
    const base1 = median(runs.get(`${target}|${KEY_COUNTS[0]}`).map((r) => r.rps));
    for (const n of KEY_COUNTS) {
      const rs = runs.get(`${target}|${n}`);
      const pool = pools.get(`${target}|${n}`);
      const rps = rs.map((r) => r.rps);
      const latencies = rs.flatMap((r) => r.latencies).sort((a, b) => a - b);
      rows.push(
        `| ${target} | ${n}${pool.orgs ? ` (${pool.orgs})` : ""} | ${Math.round(median(rs.map((r) => r.warmRps)))} | ${sum(rs.map((r) => r.warmStatuses))} | ` +
          `${Math.round(median(rps))} (${Math.round(Math.min(...rps))}–${Math.round(Math.max(...rps))}) | ` +
          `${(median(rps) / base1).toFixed(2)} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ` +
          `${sum(rs.map((r) => r.statuses))} | ${Math.min(...rs.map((r) => r.objectsUsed))} | ` +
          `${Math.max(...rs.map((r) => r.maxPerObject))} / ${median(rs.map((r) => r.meanPerObject)).toFixed(1)} | ` +
          `${(100 * Math.max(...rs.map((r) => r.maxShare))).toFixed(1)}% | ${rs.reduce((a, r) => a + r.mismatches, 0)} |`,
      );
    }
  }
  const lines = [
    `bench/keys — ${new Date().toISOString()} — ${machine}`,
    `${ROUNDS} rounds, ${DURATION} s per pass, ${CONNECTIONS} connections, rate limits lifted`,
    "",
    "| target | pool: objects (orgs) | warm-up req/s | warm-up statuses | in use req/s, median (min–max) | ÷ 1 object | p50 ms | p99 ms | statuses | objects used (min over rounds) | max / mean requests per object | max share | objects with a lower own count |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
  ];
  console.log(lines.join("\n"));
  const out = join(root, "bench", "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, `keys-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    JSON.stringify(
      {
        machine,
        ROUNDS,
        DURATION,
        CONNECTIONS,
        runs: Object.fromEntries([...runs].map(([k, rs]) => [k, rs.map(({ latencies, ...r }) => r)])),
      },
      null,
      2,
    ),
  );
}

/** Stops wrangler dev and waits (≤ 10 s) for it to exit, so that its storage can be removed. */
async function stopDev() {
  if (!dev?.pid || dev.exitCode !== null) return;
  const exited = new Promise((resolve) => dev.once("exit", resolve));
  try {
    process.kill(-dev.pid, "SIGTERM");
  } catch {}
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    clearTimeout(guard);
    await stopDev();
    cleanUp();
  });
