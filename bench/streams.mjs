#!/usr/bin/env node
// Live streams held by clients that do not read (API_CONTRACT §19, §33; issue #78), as acceptance
// probes against the local Worker (wrangler's runtime, bench/lib.mjs `Server`): one key's 20 paused
// streams, then 4 keys' 10 each, while the engine writes long log lines to their deployment.
//
// Each phase: a new deployment and keys of its own (so no place of §33's is still held); its streams
// opened at once; WRITES requests of 100 lines of 8,192 characters posted (~0.8 MiB each, every one
// pushed to every stream); a measure; the clients read again (a stream the Worker ended for its
// share of the budget then closes: `ended`); the clients gone, and CLOSE_SECONDS later (a stream
// frees its place when the Worker sees its client go, or its 20 s lease lapses) a measure. A paused
// client never reads (node:http, the response paused). Clients connect to the Worker's own socket
// (lib `direct`), not through the dev proxy, whose queues (its receive queue from the Worker grows
// to 32 MB here) would hold every byte outside the Worker: so only the Worker's send queue, ~4 MB a
// connection, stands between a paused client and the Worker's buffers, and WRITES (12, ~9.6 MiB a
// stream) goes well beyond it. Beside each paused phase, and first as warm-ups, phases of as many
// streams whose clients read everything: the same work for the Worker (each update parsed per
// stream, each event framed and sent).
//
// Two passes, each on a new server: the Worker process's RSS after SETTLE_SECONDS quiet (V8 and the
// allocator give memory back lazily, if at all: tens of MB of noise on a loaded machine), then the
// isolate's live heap after a full collection (exact; the inspector on). A paused phase's growth is
// measured from the highest figure of its pass before it (the reading phases' working set). The run
// exits 1 unless one key's 20 streams are 10 admitted and 10 refused (429 with Retry-After), the 4
// keys' 40 are all admitted, the paused phases ended streams (the budget was reached), and in both
// passes each paused phase grew by at most the isolate's budget of buffered bytes
// (src/lib/stream-buffers.ts) while open, and by no more once they closed.
//
//   node bench/streams.mjs     env: WRITES (12) SETTLE_SECONDS (20) WARMUP (2) CLOSE_SECONDS (25)
import * as http from "node:http";
import * as lib from "./lib.mjs";

const { env, sleep } = lib;
const [WRITES, SETTLE_SECONDS, WARMUP] = [env("WRITES", 12), env("SETTLE_SECONDS", 20), env("WARMUP", 2)];
const CLOSE_SECONDS = env("CLOSE_SECONDS", 25);
/** The Worker's budget (src/lib/stream-buffers.ts STREAM_BUFFER_BUDGET), MiB. */
const BUDGET_MB = 16;

/** 100 lines of 8,192 characters, numbered from `from`. */
const lines = (from) =>
  Array.from({ length: 100 }, (_, i) => ({ message: `line ${from + i} `.padEnd(8192, "x") }));

/** A stream of `path`, its client reading (`reading`) or paused: once answered, its status. */
function stream(server, path, key, reading) {
  return new Promise((resolve, reject) => {
    const headers = { accept: "text/event-stream", "x-api-key": key };
    const req = http.get(new URL(path, server.direct), { headers }, (res) => {
      const s = { status: res.statusCode, retryAfter: res.headers["retry-after"], ended: false };
      res.on("end", () => (s.ended = true));
      s.resume = () => res.on("data", () => undefined).resume();
      s.close = () => req.destroy();
      if (reading) s.resume();
      else res.pause();
      resolve(s);
    });
    req.on("error", (err) => (err.code === "ECONNRESET" ? undefined : reject(err)));
  });
}

async function newDeployment(c) {
  const project = await lib.newProject(c.server, c.seed.bench.keys[0], "streams");
  const body = { stack_ids: [], data: { patch: [] } };
  const path = `/environments/${project.default_environment_id}/deployments`;
  return (await lib.internal(c.server, "POST", path, body)).id;
}

/**
 * The live size of the isolate that runs the Worker and its Durable Objects (not the local D1,
 * which runs beside them in the same process), in MB, through its inspector (BENCH_INSPECTOR=1,
 * bench/start-worker.mjs): V8's heap after a full collection, which a heap snapshot makes first
 * (`HeapProfiler.takeHeapSnapshot`, its chunks dropped; workerd answers no `collectGarbage`). A
 * snapshot leaves the process a few hundred MB of its own, so this pass reads no RSS.
 */
async function liveHeap(server) {
  const socket = new WebSocket(`${server.inspector.replace("http://", "ws://")}ws`, {
    headers: { origin: "http://localhost" },
  });
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve);
    socket.addEventListener("error", reject);
  });
  const waiting = new Map();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data));
    waiting.get(message.id)?.(message.result);
  });
  let id = 0;
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      waiting.set(++id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call("HeapProfiler.enable");
  return {
    measure: async () => {
      await server.quiet();
      await call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      return (await call("Runtime.getHeapUsage")).usedSize / 2 ** 20;
    },
    close: () => socket.close(),
  };
}

/** The Worker process's RSS after SETTLE_SECONDS, once it is quiet. */
const settledRss = (server) => ({
  measure: async () => {
    await sleep(SETTLE_SECONDS * 1000);
    await server.quiet();
    return server.rssMb();
  },
  close: () => undefined,
});

/** One phase: `keys` each open `perKey` streams of a new deployment at once, paused or reading. */
async function phase(c, label, keys, perKey, reading) {
  const id = await newDeployment(c);
  const before = await c.probe.measure();
  const path = `/v1/deployments/${id}/timeline`;
  const opening = keys.flatMap((key) =>
    Array.from({ length: perKey }, () => stream(c.server, path, key, reading)),
  );
  const streams = await Promise.all(opening);
  let peakRss = c.server.rssMb();
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, c.server.rssMb())), 100);
  for (let i = 0; i < WRITES; i++)
    await lib.internal(c.server, "POST", `/deployments/${id}/logs`, { lines: lines(i * 100 + 1) });
  clearInterval(sampler);
  const open = await c.probe.measure();
  for (const s of streams) s.resume();
  await sleep(5000);
  const ended = streams.filter((s) => s.status === 200 && s.ended).length;
  for (const s of streams) s.close();
  await sleep(CLOSE_SECONDS * 1000);
  const after = await c.probe.measure();
  const refused = streams.filter((s) => s.status === 429);
  const admitted = streams.filter((s) => s.status === 200).length;
  const retryAfter = refused[0]?.retryAfter;
  return { label, admitted, refused: refused.length, retryAfter, ended, before, peakRss, open, after };
}

/** The phases on a new server, measured by `probe`; each row with the highest figures before it. */
async function pass(config, state, seed, probeOf, runtime) {
  const vars = lib.varsOf(seed, { ADMIN_TOKEN: lib.hex(24) }).api;
  const copy = lib.copyState(state, `api-${lib.hex(4)}`);
  const server = await new lib.Server("api", config, copy, vars, runtime).start();
  const c = { server, seed, probe: await probeOf(server) };
  const keys = seed.bench.keys.slice(1);
  const plan = [
    ...Array.from({ length: WARMUP }, () => ["warm-up: 4 keys × 10 reading streams", 4, 10, true]),
    ["20 reading streams of one key", 1, 20, true],
    ["20 paused streams of one key", 1, 20, false],
    ["4 keys × 10 reading streams", 4, 10, true],
    ["4 keys × 10 paused streams", 4, 10, false],
  ];
  const rows = [];
  let [peak, peakRss] = [0, 0];
  for (const [label, n, perKey, reading] of plan) {
    const row = await phase(c, label, keys.splice(0, n), perKey, reading);
    Object.assign(row, { peak: Math.max(peak, row.before), peakRssBefore: peakRss });
    peak = Math.max(peak, row.before, row.open, row.after);
    peakRss = Math.max(peakRss, row.peakRss);
    rows.push(row);
  }
  c.probe.close();
  await server.stop();
  return rows.slice(WARMUP);
}

async function main() {
  const { dir, seed } = lib.seededState({ keyCount: 11 + 4 * WARMUP });
  const config = lib.snapshot("api");
  const rss = await pass(config, dir, seed, settledRss);
  const heap = await pass(config, dir, seed, liveHeap, { env: { BENCH_INSPECTOR: "1" } });
  const f = (mb) => mb.toFixed(1);
  const arrow = (r, i) =>
    `${f(r.before)} → ${f(r.open)} → ${f(r.after)}${i % 2 ? ` (peak before ${f(r.peak)})` : ""}`;
  const head =
    "phase | admitted | 429 (Retry-After s) | ended by the Worker | RSS peak written to, MB | Worker RSS MB: " +
    "before → open → after close | isolate's live heap MB: before → open → after close";
  const both = (i, of) => `${of(rss[i])} · ${of(heap[i])}`;
  const report = lib.table(
    head,
    rss.map((r, i) => [
      r.label,
      both(i, (x) => x.admitted),
      both(i, (x) => `${x.refused}${x.retryAfter ? ` (${x.retryAfter})` : ""}`),
      both(i, (x) => x.ended),
      `${f(r.peakRss)}${i % 2 ? ` (before: ${f(r.peakRssBefore)})` : ""}`,
      arrow(r, i),
      arrow(heap[i], i),
    ]),
  );
  const [failures, beyond, budget] = [[], [], BUDGET_MB * 1.048576];
  for (const [what, rows] of Object.entries({ RSS: rss, "live heap": heap })) {
    for (const [i, r] of rows.entries()) {
      const [admits, refusals] = i < 2 ? [10, 10] : [40, 0];
      if (r.admitted !== admits || r.refused !== refusals || (refusals && !r.retryAfter))
        failures.push(`${what} pass, ${r.label}: ${r.admitted} admitted, ${r.refused} refused`);
      if (i % 2 === 0) continue;
      if (!r.ended)
        failures.push(`${what} pass, ${r.label}: none ended (the budget was not reached: raise WRITES)`);
      const growth = [r.open - r.peak, r.after - r.peak];
      if (what === "RSS") growth.push(r.peakRss - r.peakRssBefore);
      beyond.push(`${r.label}, ${what}: ${growth.map(f).join(" / ")} MB`);
      if (Math.max(...growth) > budget) failures.push(`${r.label}: ${what} ${growth.map(f).join(" / ")} MB`);
    }
  }
  const verdict = failures.length
    ? `FAILED: ${failures.join("; ")}`
    : `passed: 10 of one key's 20 admitted, 40 of 4 keys'; paused streams over their share ended; above the reading ` +
      `phases' highest, RSS (peak too) and the live heap grew by at most the ${BUDGET_MB} MiB budget, open and closed`;
  const notes = [
    `${WARMUP} warm-up phases first; WRITES=${WRITES}, SETTLE_SECONDS=${SETTLE_SECONDS}, CLOSE_SECONDS=${CLOSE_SECONDS}. Cells "a · b": the RSS pass, the heap pass.`,
    `Above the figure's highest before the phase (open / after close / RSS peak while written to): ${beyond.join("; ")}.`,
  ].join("\n");
  console.log(lib.report(lib.header("node bench/streams.mjs"), notes, report, verdict));
  lib.saveResults("streams", { rss, heap, failures });
  if (failures.length) throw new Error(verdict);
}

lib.runMain(60, main);
