#!/usr/bin/env node
// `npm run bench:webhooks`: fan-out and delivery throughput of the webhook pipeline under
// `wrangler dev` on this machine, to a local receiver. Stops by itself (hard limit 10 min).
//
//  1. a fresh local state in a temp dir (--persist-to), migrations applied;
//  2. a receiver in this process (node:http on 127.0.0.1, a free port) that answers 200 and
//     records when each request arrived and its `webhook-id`;
//  3. `wrangler dev` on 127.0.0.1 (first free port of 8780–8789) with
//     ALLOW_INSECURE_WEBHOOKS=true (the receiver is http://127.0.0.1), so the real local
//     EVENTS queue (miniflare's, batches of 10, 1 s batch timeout as in wrangler.toml)
//     carries the fan-out and delivery messages and the consumer sends real HTTP;
//  4. fan-out: a project with FANOUT (50) webhook integrations; FANOUT_EVENTS (3) events, one
//     at a time, each through `POST /internal/v1/projects/{id}/events`; for each, the time from
//     the request to the last of its 50 deliveries arriving;
//  5. volume: a project with one integration; VOLUME (1,000) events sent as fast as the
//     internal API takes them (EMIT_CONCURRENCY, 5, at a time); the time from the first request to the last
//     delivery arriving, and the rate of the deliveries;
//  6. drain: that project's second integration, disabled during step 5 (so VOLUME deliveries were
//     recorded `skipped`), is re-enabled and one `recover` call re-queues them all: the time
//     until the last arrives is the queue and the consumer alone, without the API in front;
//  7. a table on stdout and the raw figures in bench/results/ (git-ignored).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CHILD_ENV, freePorts, stopOnTimeoutOrSignal, wranglerRunner } from "./lib.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const FANOUT = Number(process.env.FANOUT ?? 50);
const FANOUT_EVENTS = Number(process.env.FANOUT_EVENTS ?? 3);
const VOLUME = Number(process.env.VOLUME ?? 1000);
const EMIT_CONCURRENCY = Number(process.env.EMIT_CONCURRENCY ?? 5);
const ADMIN_TOKEN = randomBytes(24).toString("hex");
const HARD_TIMEOUT_MS = 10 * 60_000;
const WAIT_MS = 5 * 60_000;

const state = mkdtempSync(join(tmpdir(), "bench-webhooks-"));
let dev;
let receiver;

function cleanUp() {
  // Only the process group this script started.
  if (dev?.pid && dev.exitCode === null) {
    try {
      process.kill(-dev.pid, "SIGTERM");
    } catch {}
  }
  receiver?.close();
  rmSync(state, { recursive: true, force: true });
}
const guard = stopOnTimeoutOrSignal("bench", HARD_TIMEOUT_MS, cleanUp);

const wranglerEnv = CHILD_ENV;

async function pickPorts() {
  return freePorts(8780, 8789, 2);
}

/** bucket → [{ at, id }] in arrival order. */
const arrivals = new Map();
let waiter;

function startReceiver() {
  return new Promise((resolve) => {
    receiver = createHttpServer((req, res) => {
      const bucket = (req.url ?? "/").split("/")[2] ?? "";
      req.resume();
      req.on("end", () => {
        const list = arrivals.get(bucket) ?? [];
        list.push({ at: performance.now(), id: String(req.headers["webhook-id"] ?? "") });
        arrivals.set(bucket, list);
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("ok");
        waiter?.();
      });
    });
    receiver.listen(0, "127.0.0.1", () => resolve(receiver.address().port));
  });
}

/** Resolves when `done()` holds, checking after every arrival; rejects after WAIT_MS. */
function until(done) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiter = undefined;
      reject(new Error("deliveries did not all arrive in time"));
    }, WAIT_MS);
    const check = () => {
      if (done()) {
        clearTimeout(timer);
        waiter = undefined;
        resolve(performance.now());
      }
    };
    waiter = check;
    check();
  });
}

async function waitReady(base) {
  for (let i = 0; i < 240; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
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

let resets = 0;
const round = (n, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function main() {
  const [port, inspectorPort] = await pickPorts();
  const receiverPort = await startReceiver();
  const base = `http://127.0.0.1:${port}`;
  const hook = (bucket) => `http://127.0.0.1:${receiverPort}/hooks/${bucket}`;
  console.error(`bench: state ${state}, api port ${port}, receiver port ${receiverPort}`);
  wranglerRunner(wrangler, root)(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
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
      "ALLOW_INSECURE_WEBHOOKS:true",
      "--log-level",
      "error",
      "--show-interactive-dev-session=false",
    ],
    { cwd: root, detached: true, stdio: ["ignore", "ignore", "inherit"], env: wranglerEnv },
  );
  await waitReady(base);

  const org = await call(base, "POST", "/internal/v1/orgs", {
    admin: true,
    body: { name: "Bench Webhooks" },
  });
  const owner = await call(base, "POST", "/internal/v1/accounts", {
    admin: true,
    body: { name: "bench-hooks" },
  });
  await call(base, "POST", `/internal/v1/orgs/${org.id}/members`, {
    admin: true,
    body: { account_id: owner.id, role: "owner" },
  });
  const { key } = await call(base, "POST", `/internal/v1/orgs/${org.id}/api-keys`, {
    admin: true,
    body: { account_id: owner.id, created_by: owner.id },
  });
  const project = async (name) => call(base, "POST", "/v1/projects", { key, body: { name } });
  const integrate = (projectId, bucket) =>
    call(base, "POST", `/internal/v1/projects/${projectId}/notification-integrations`, {
      admin: true,
      body: { type: "webhook", url: hook(bucket), configuration: { changelog: true } },
    });
  // A connection wrangler dev resets under load, or its "worker restarted mid-request" 503, is
  // tried again (up to 3 times); an event the failed request may still have created is simply
  // not counted (only returned ids are awaited).
  const emit = async (projectId, n) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call(base, "POST", `/internal/v1/projects/${projectId}/events`, {
          admin: true,
          body: { type: "changelog.created", data: { title: `bench ${n}` } },
        });
      } catch (err) {
        const restarted = /→ 503 Your worker restarted/.test(String(err?.message));
        if (attempt >= 3 || (err?.cause?.code === undefined && !restarted)) throw err;
        resets++;
      }
    }
  };

  // Warm-up: one delivery end to end, so isolate start-up is not in the figures.
  const warm = await project("bench-warm");
  await integrate(warm.id, "warm");
  await emit(warm.id, 0);
  await until(() => (arrivals.get("warm")?.length ?? 0) >= 1);

  // 1. Fan-out: one event to FANOUT integrations.
  const fan = await project("bench-fanout");
  for (let i = 0; i < FANOUT; i++) await integrate(fan.id, `fan${i}`);
  const fanRuns = [];
  for (let n = 0; n < FANOUT_EVENTS; n++) {
    const start = performance.now();
    const { id } = await emit(fan.id, n);
    const accepted = performance.now();
    const got = (i) => (arrivals.get(`fan${i}`) ?? []).find((a) => a.id === id);
    const end = await until(() => Array.from({ length: FANOUT }, (_, i) => got(i)).every(Boolean));
    const times = Array.from({ length: FANOUT }, (_, i) => got(i).at - start).sort((a, b) => a - b);
    fanRuns.push({
      event: id,
      accept_ms: round(accepted - start),
      first_ms: round(times[0]),
      median_ms: round(times[Math.floor(times.length / 2)]),
      last_ms: round(end - start),
      deliveries_per_s: round((FANOUT / (end - start)) * 1000),
    });
    console.error(
      `bench: fan-out ${n + 1}/${FANOUT_EVENTS}: ${FANOUT} deliveries in ${round(end - start)} ms`,
    );
  }

  // 2. Volume: VOLUME events to one integration. A second integration, disabled meanwhile,
  // records them all as `skipped`, for step 3.
  const vol = await project("bench-volume");
  await integrate(vol.id, "vol");
  const drain = await integrate(vol.id, "drain");
  const drainPath = `/v1/projects/${vol.id}/notification-integrations/${drain.id}`;
  await call(base, "PATCH", drainPath, { key, body: { enabled: false } });
  const start = performance.now();
  let sent = 0;
  const ids = new Set();
  await Promise.all(
    Array.from({ length: EMIT_CONCURRENCY }, async () => {
      while (sent < VOLUME) {
        const n = sent++;
        ids.add((await emit(vol.id, n)).id);
      }
    }),
  );
  const allAccepted = performance.now();
  const end = await until(
    () => new Set((arrivals.get("vol") ?? []).map((a) => a.id).filter((id) => ids.has(id))).size >= VOLUME,
  );
  const volList = (arrivals.get("vol") ?? []).filter((a) => ids.has(a.id));
  const volume = {
    events: VOLUME,
    accept_s: round((allAccepted - start) / 1000, 2),
    accept_per_s: round((VOLUME / (allAccepted - start)) * 1000),
    last_delivery_s: round((end - start) / 1000, 2),
    deliveries_per_s: round((VOLUME / (end - start)) * 1000),
    duplicates: volList.length - new Set(volList.map((a) => a.id)).size,
    connection_resets_retried: resets,
  };

  // 3. Drain: re-enable the second integration and recover its VOLUME skipped deliveries in one
  // call: VOLUME messages already written, so this is the queue and the consumer alone.
  await call(base, "PATCH", drainPath, { key, body: { enabled: true } });
  const drainStart = performance.now();
  const recovered = await call(base, "POST", `${drainPath}/recover`, {
    key,
    body: { since: new Date(Date.now() - 3600_000).toISOString() },
  });
  const drainAccepted = performance.now();
  const drainEnd = await until(
    () => new Set((arrivals.get("drain") ?? []).map((a) => a.id).filter((id) => ids.has(id))).size >= VOLUME,
  );
  const drainList = (arrivals.get("drain") ?? []).filter((a) => ids.has(a.id));
  const drained = {
    queued: recovered.queued,
    recover_ms: round(drainAccepted - drainStart),
    last_delivery_s: round((drainEnd - drainStart) / 1000, 2),
    deliveries_per_s: round((VOLUME / (drainEnd - drainStart)) * 1000),
    duplicates: drainList.length - new Set(drainList.map((a) => a.id)).size,
  };

  const machine = { cpus: cpus().length, node: process.version, loadavg: loadavg().map((l) => round(l, 2)) };
  const results = {
    at: new Date().toISOString(),
    machine,
    fanout: { integrations: FANOUT, runs: fanRuns },
    volume,
    drained,
  };
  mkdirSync(join(root, "bench", "results"), { recursive: true });
  writeFileSync(
    join(root, "bench", "results", `webhooks-${Date.now()}.json`),
    JSON.stringify(results, null, 2),
  );

  console.log(
    `\nwebhooks bench — ${results.at}, ${machine.cpus} CPUs, Node ${machine.node}, load ${machine.loadavg.join(" ")}\n`,
  );
  console.log(
    `| one event → ${FANOUT} integrations | accepted ms | first ms | median ms | last ms | deliveries/s |`,
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const [i, r] of fanRuns.entries()) {
    console.log(
      `| run ${i + 1} | ${r.accept_ms} | ${r.first_ms} | ${r.median_ms} | ${r.last_ms} | ${r.deliveries_per_s} |`,
    );
  }
  console.log(`\n| ${VOLUME} events → 1 integration (a 2nd, disabled, records each as skipped) | value |`);
  console.log("| --- | --- |");
  console.log(
    `| all events accepted by the API after | ${volume.accept_s} s (${volume.accept_per_s} events/s) |`,
  );
  console.log(`| last delivery arrived after | ${volume.last_delivery_s} s |`);
  console.log(`| deliveries per second (end to end) | ${volume.deliveries_per_s} |`);
  console.log(`| duplicate deliveries | ${volume.duplicates} |`);
  console.log(
    `| API requests reset or restarted by wrangler dev and retried | ${volume.connection_resets_retried} |`,
  );
  console.log(`\n| recover ${VOLUME} skipped deliveries (queue + consumer only) | value |`);
  console.log("| --- | --- |");
  console.log(`| recover answered (queued) | ${drained.recover_ms} ms (${drained.queued}) |`);
  console.log(`| last delivery arrived after | ${drained.last_delivery_s} s |`);
  console.log(`| deliveries per second | ${drained.deliveries_per_s} |`);
  console.log(`| duplicate deliveries | ${drained.duplicates} |`);
}

main()
  .then(() => {
    clearTimeout(guard);
    cleanUp();
    process.exit(0);
  })
  .catch((err) => {
    console.error(err);
    clearTimeout(guard);
    cleanUp();
    process.exit(1);
  });
