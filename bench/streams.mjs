#!/usr/bin/env node
// Live streams held by clients that do not read (API_CONTRACT §19, §33; issue #78), as acceptance
// probes against the local Worker (bench/lib.mjs `Server`): one key's 20 paused streams, then 4 keys
// × 10, while the engine writes long log lines to their deployment. Each phase: a new deployment and
// keys of its own (no place of §33's still held); its streams opened at once; WRITES requests of 100
// lines of 8,192 characters (~0.8 MiB, pushed to every stream); a measure; the clients read again (a
// stream the Worker ended for its share of the budget then closes: `ended`); the clients gone, and
// CLOSE_SECONDS later (a place is freed when the Worker sees its client go, or after its 20 s lease)
// a measure. Clients connect to the Worker's own socket (lib `direct`), not through the dev proxy,
// whose queues would hold every byte outside the Worker. Each paused phase has a pair of as many
// streams whose clients read, the same work for the Worker: one key's 20 after its reading 20, then
// ROUNDS pairs of 4 keys × 10 in alternating order, after WARMUP reading phases.
//
// Three figures: what the Worker's process holds for the paused clients, exactly (what they receive
// once they read again, less what the kernel's queues of their connections held, `ss`); in two passes
// on new servers, its RSS after SETTLE_SECONDS quiet and the isolate's live heap after a full
// collection, each less its pair's (the median of the rounds). RSS is shown, not judged: V8 and the
// allocator give memory back lazily, and the same pair differs by tens of MB from round to round, so
// the exact two decide, as instructions do where the clock is noise. Exits 1 unless one key's 20 are
// 10 admitted and 10 refused (429, Retry-After), 4 keys' 40 all admitted, paused streams ended (the
// budget was reached), and the bytes held plus the live heap's growth are at most the isolate's
// budget (src/lib/stream-buffers.ts), open and once closed.
//
//   node bench/streams.mjs   env: WRITES (12) ROUNDS (3) SETTLE_SECONDS (20) WARMUP (2) CLOSE_SECONDS (25)
import { execFileSync } from "node:child_process";
import * as http from "node:http";
import * as lib from "./lib.mjs";

const { env, sleep } = lib;
const [WRITES, SETTLE_SECONDS, WARMUP] = [env("WRITES", 12), env("SETTLE_SECONDS", 20), env("WARMUP", 2)];
const [CLOSE_SECONDS, ROUNDS] = [env("CLOSE_SECONDS", 25), env("ROUNDS", 3)];
const BUDGET_MB = 16; // The Worker's budget, MiB (src/lib/stream-buffers.ts STREAM_BUFFER_BUDGET).

/** 100 lines of 8,192 characters, numbered from `from`. */
const lines = (from) =>
  Array.from({ length: 100 }, (_, i) => ({ message: `line ${from + i} `.padEnd(8192, "x") }));

/** A stream of `path`, its client reading (`reading`) or paused: once answered, its status. */
function stream(server, path, key, reading) {
  return new Promise((resolve, reject) => {
    const headers = { accept: "text/event-stream", "x-api-key": key };
    const req = http.get(new URL(path, server.direct), { headers }, (res) => {
      const s = { status: res.statusCode, retryAfter: res.headers["retry-after"], ended: false, bytes: 0 };
      res.on("end", () => (s.ended = true));
      s.resume = () => res.on("data", (chunk) => (s.bytes += chunk.length)).resume();
      s.close = () => req.destroy();
      reading ? s.resume() : res.pause();
      resolve(s);
    });
    req.on("error", (err) => (err.code === "ECONNRESET" ? undefined : reject(err)));
  });
}

/** The bytes in the kernel's queues of every connection to `server`'s socket (both ends), MB. */
function kernelQueuedMb(server) {
  const port = `:${new URL(server.direct).port}`;
  const out = execFileSync("ss", ["-tnH", "state", "established"], { encoding: "utf8" });
  const ends = out.split("\n").map((line) => line.trim().split(/\s+/));
  const ours = ends.filter(([, , local, peer]) => local?.endsWith(port) || peer?.endsWith(port));
  return ours.reduce((sum, [recvQ, sendQ]) => sum + Number(recvQ) + Number(sendQ), 0) / 2 ** 20;
}

/**
 * The isolate's live heap in MB (the Worker and its objects, not the local D1), through its inspector
 * (BENCH_INSPECTOR=1): after a full collection, which a heap snapshot makes first (workerd answers no
 * `collectGarbage`). A snapshot leaves the process a few hundred MB of its own: this pass reads no RSS.
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
  measure: () => sleep(SETTLE_SECONDS * 1000).then(() => server.quiet().then(() => server.rssMb())),
  close: () => undefined,
});

/** One phase: `keys` each open `perKey` streams of a new deployment at once, paused or reading. */
async function phase(c, label, keys, perKey, reading) {
  const project = await lib.newProject(c.server, c.seed.bench.keys[0], "streams");
  const deployment = { stack_ids: [], data: { patch: [] } };
  const envPath = `/environments/${project.default_environment_id}/deployments`;
  const { id } = await lib.internal(c.server, "POST", envPath, deployment);
  const row = { label, reading, before: await c.probe.measure() };
  const path = `/v1/deployments/${id}/timeline`;
  const opening = keys.flatMap((key) =>
    Array.from({ length: perKey }, () => stream(c.server, path, key, reading)),
  );
  const streams = await Promise.all(opening);
  row.peakRss = c.server.rssMb();
  const sampler = setInterval(() => (row.peakRss = Math.max(row.peakRss, c.server.rssMb())), 100);
  for (let i = 0; i < WRITES; i++)
    await lib.internal(c.server, "POST", `/deployments/${id}/logs`, { lines: lines(i * 100 + 1) });
  clearInterval(sampler);
  const kernel = kernelQueuedMb(c.server);
  row.open = await c.probe.measure();
  for (const s of streams) s.resume();
  await sleep(5000);
  row.ended = streams.filter((s) => s.status === 200 && s.ended).length;
  // What the paused clients had not received, less what the kernel held: in the Worker's process.
  row.held = reading ? 0 : streams.reduce((sum, s) => sum + s.bytes, 0) / 2 ** 20 - kernel;
  for (const s of streams) s.close();
  await sleep(CLOSE_SECONDS * 1000);
  row.after = await c.probe.measure();
  const refused = streams.filter((s) => s.status === 429);
  row.retryAfter = refused[0]?.retryAfter;
  [row.admitted, row.refused] = [streams.filter((s) => s.status === 200).length, refused.length];
  return row;
}

/**
 * The phases on a new server, measured by `probe`: warm-ups, one key's 20 reading then paused, and
 * `rounds` pairs of 4 keys × 10, reading first in the odd ones. Each paused phase with its pair.
 */
async function pass(config, state, seed, probeOf, rounds, runtime) {
  const vars = lib.varsOf(seed, { ADMIN_TOKEN: lib.hex(24) }).api;
  const copy = lib.copyState(state, `api-${lib.hex(4)}`);
  const server = await new lib.Server("api", config, copy, vars, runtime).start();
  const c = { server, seed, probe: await probeOf(server) };
  const keys = seed.bench.keys.slice(1);
  const forty = (reading) => [`4 keys × 10 ${reading ? "reading" : "paused"} streams`, 4, 10, reading];
  const plan = [
    ...Array.from({ length: WARMUP }, () => ["warm-up: 4 keys × 10 reading streams", 4, 10, true]),
    ["20 reading streams of one key", 1, 20, true],
    ["20 paused streams of one key", 1, 20, false],
    ...Array.from({ length: rounds }, (_, i) => [forty(i % 2 === 0), forty(i % 2 === 1)]).flat(),
  ];
  const rows = [];
  for (const [label, n, perKey, reading] of plan)
    rows.push(await phase(c, label, keys.splice(0, n), perKey, reading));
  c.probe.close();
  await server.stop();
  const measured = rows.slice(WARMUP);
  // A paused phase and its pair: the reading phase of its round (one key's: the one before it).
  return measured.flatMap((r, i) => (r.reading ? [] : [{ ...r, pair: measured[i % 2 ? i - 1 : i + 1] }]));
}

async function main() {
  const { dir, seed } = lib.seededState({ keyCount: 3 + 4 * WARMUP + 8 * ROUNDS });
  const config = lib.snapshot("api");
  const rss = await pass(config, dir, seed, settledRss, ROUNDS);
  const heap = await pass(config, dir, seed, liveHeap, 1, { env: { BENCH_INSPECTOR: "1" } });
  const f = (mb) => mb.toFixed(1);
  const budget = BUDGET_MB * 1.048576;
  const labels = [...new Set(rss.map((r) => r.label))];
  const of = (rows, label) => rows.filter((r) => r.label === label);
  /** A paused phase's figures less its pair's, by name: the median of its rounds, and each round's. */
  const growth = (rows, label, names) =>
    names.map((name) => {
      const each = of(rows, label).map((r) => r[name] - r.pair[name]);
      return { median: lib.median(each), each };
    });
  const shown = (g) => `${f(g.median)}${g.each.length > 1 ? ` (${g.each.map(f).join(", ")})` : ""}`;
  const [failures, all] = [[], [...rss, ...heap]];
  for (const r of all) {
    for (const x of [r, r.pair]) {
      const [admits, refusals] = r.label.includes("one key") ? [10, 10] : [40, 0];
      if (x.admitted !== admits || x.refused !== refusals || (refusals && !x.retryAfter))
        failures.push(`${x.label}: ${x.admitted} admitted, ${x.refused} refused`);
    }
    if (!r.ended) failures.push(`${r.label}: none ended (the budget was not reached: raise WRITES)`);
  }
  const rows = labels.map((label) => {
    const rssGrowth = growth(rss, label, ["open", "after", "peakRss"]);
    const heapGrowth = growth(heap, label, ["open", "after"]);
    const [held, heapMb] = [of(all, label).map((r) => r.held), heapGrowth.map((x) => x.median)];
    if (Math.max(...held) + Math.max(...heapMb) > budget)
      failures.push(`${label}: ${held.map(f)} MB held, live heap ${heapMb.map(f).join(" / ")} MB`);
    const cells = (r) => `${r.admitted} · ${r.refused}${r.retryAfter ? ` (${r.retryAfter})` : ""}`;
    const list = (cell) => of(all, label).map(cell).join(", ");
    return [
      label,
      cells(of(rss, label)[0]),
      list((r) => `${r.ended}/${r.admitted}`),
      held.map(f).join(", "),
      rssGrowth.map(shown).join(" / "),
      heapGrowth.map(shown).join(" / "),
    ];
  });
  const head =
    "paused phase | admitted · 429 (Retry-After s) | ended by the Worker | held in the process for the paused clients, MB | " +
    "RSS above its pair (shown, not judged), MB: open / after close / peak while written to | live heap above its pair, MB: open / after close";
  const verdict = failures.length
    ? `FAILED: ${failures.join("; ")}`
    : `passed: 10 of one key's 20 admitted, 40 of 4 keys'; paused streams over their share ended; the bytes the process held ` +
      `for them and the live heap's growth above their pairs, open and closed, within the ${BUDGET_MB} MiB budget (RSS: shown)`;
  const notes =
    `${WARMUP} warm-up phases, ${ROUNDS} rounds of 4 keys × 10 (the heap pass: 1); WRITES=${WRITES}, ` +
    `SETTLE_SECONDS=${SETTLE_SECONDS}, CLOSE_SECONDS=${CLOSE_SECONDS}. Lists: the RSS pass's rounds, then the heap pass's.`;
  console.log(lib.report(lib.header("node bench/streams.mjs"), notes, lib.table(head, rows), verdict));
  lib.saveResults("streams", { rss, heap, failures });
  if (failures.length) throw new Error(verdict);
}

lib.runMain(90, main);
