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
// What the Worker's process holds for the paused clients, exactly (what they receive once they read
// again, less what the kernel's queues of their connections held, `ss`); in two passes on new
// servers, the process's RSS after SETTLE_SECONDS quiet with what it is made of (every isolate's V8
// heap as it stands, through workerd's inspector; the bytes its allocator has out, through gdb when
// the machine has it), and the isolate's live heap after a full collection; each less its pair's
// (the median of the rounds; a round's pair differs by tens of MB as V8 and the allocator keep or
// give back memory). Exits 1 unless one key's 20 are 10 admitted and 10 refused (429,
// Retry-After), 4 keys' 40 all admitted, paused streams ended (the budget was reached), the bytes
// held plus the live heap's growth are at most the isolate's budget (src/lib/stream-buffers.ts),
// open and once closed, and so is the RSS's growth (issue #78), open and once closed.
//
//   node bench/streams.mjs   env: WRITES (12) ROUNDS (3) SETTLE_SECONDS (20) WARMUP (2) CLOSE_SECONDS (25)
//   FROM=bench/results/streams-<time>.json node bench/streams.mjs   (a saved run's table again)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as http from "node:http";
import * as lib from "./lib.mjs";

const { env, sleep } = lib;
const [WRITES, SETTLE_SECONDS, WARMUP] = [env("WRITES", 12), env("SETTLE_SECONDS", 20), env("WARMUP", 2)];
const [CLOSE_SECONDS, ROUNDS] = [env("CLOSE_SECONDS", 25), env("ROUNDS", 3)];
const FROM = process.env.FROM; // A saved run (bench/results/streams-*.json): tabulated again, not measured.
const BUDGET_MB = 16; // The Worker's budget, MiB (src/lib/stream-buffers.ts STREAM_BUFFER_BUDGET).
const WORKER = "core:user:deploy-platform-api"; // The Worker's isolate, as workerd's inspector names it.

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

/** A session with an inspector (`url`: ws://…): `call(method, params)`, `close()`. */
async function inspector(url) {
  const socket = new WebSocket(url, { headers: { origin: "http://localhost" } });
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
  return { call, close: () => socket.close() };
}

/** The Worker's own isolate's inspector, through wrangler's proxy (which holds workerd's one session of it). */
const workerInspector = (server) => `${server.inspector.replace("http://", "ws://")}ws`;

/**
 * A session with every isolate of the Worker's process, through workerd's own inspector (on one of
 * the ports the process listens on, BENCH_INSPECTOR=1): the Worker's, and the local runtime's
 * (`d1:db`, the local D1, the queues, the caches…). `{ id: session }`.
 */
async function isolates(server) {
  for (const port of lib.listeningPorts(server.pids.worker)) {
    const list = await fetch(`http://127.0.0.1:${port}/json/list`)
      .then((res) => res.json())
      .catch(() => undefined);
    if (!Array.isArray(list)) continue;
    const url = (id) => (id === WORKER ? workerInspector(server) : `ws://127.0.0.1:${port}/${id}`);
    const sessions = await Promise.all(list.map(({ id }) => inspector(url(id))));
    return Object.fromEntries(list.map(({ id }, i) => [id, sessions[i]]));
  }
  throw new Error("the Worker's process has no inspector (BENCH_INSPECTOR=1)");
}

/**
 * The isolate's live heap in MB (the Worker and its objects, not the local D1), through its inspector:
 * after a full collection, which a heap snapshot makes first (workerd answers no `collectGarbage`).
 * A snapshot leaves the process a few hundred MB of its own: this pass reads no RSS.
 */
async function liveHeap(server) {
  const { call, close } = await inspector(workerInspector(server));
  await call("HeapProfiler.enable");
  return {
    measure: async () => {
      await server.quiet();
      await call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      return (await call("Runtime.getHeapUsage")).usedSize / 2 ** 20;
    },
    close,
  };
}

/**
 * workerd's allocator (tcmalloc, linked in) through gdb, when the machine has it: the bytes the
 * process has allocated and not freed, then the RSS once the allocator has given its free pages back
 * (`ReleaseMemoryToSystem`). tcmalloc keeps freed pages for reuse, so the RSS also holds some of
 * what was allocated once and is not held now. The call stops the process for ~1.3 s. MB.
 */
function allocator(server) {
  const script = [
    "set pagination off",
    "set $v = (unsigned long*)malloc(8)",
    'set $ok = (char)MallocExtension_Internal_GetNumericProperty("generic.current_allocated_bytes", 31, $v)',
    'printf "allocated %lu\\n", *$v',
    "call (void)MallocExtension_Internal_ReleaseMemoryToSystem((unsigned long)-1)",
    "call (void)free($v)",
    "detach",
  ].flatMap((line) => ["-ex", line]);
  const out = execFileSync("gdb", ["-p", String(server.pids.worker), "-batch", "-nx", ...script], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
    timeout: 60_000,
  });
  const allocated = /^allocated (\d+)$/m.exec(out);
  if (!allocated) throw new Error(`gdb read no figure of workerd's allocator: ${out.slice(-500)}`);
  return { inUse: Number(allocated[1]) / 2 ** 20, released: server.rssMb() };
}
const gdb = (() => {
  try {
    execFileSync("gdb", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The Worker process's RSS after SETTLE_SECONDS, once it is quiet, and what it is made of, MB: the
 * V8 heap of each isolate as it stands (no collection: `Runtime.getHeapUsage`'s `totalSize`, what V8
 * has taken, garbage included), the Worker's (`v8Total`), the local D1's (`d1Total`) and all of the
 * process's together (`v8All`); and the allocator's figures.
 */
async function settledRss(server) {
  const sessions = await isolates(server);
  return {
    measure: async () => {
      await sleep(SETTLE_SECONDS * 1000);
      await server.quiet();
      const rss = server.rssMb();
      const ids = Object.keys(sessions);
      const usage = await Promise.all(ids.map((id) => sessions[id].call("Runtime.getHeapUsage")));
      const heaps = Object.fromEntries(ids.map((id, i) => [id, usage[i].totalSize / 2 ** 20]));
      const v8 = {
        v8Total: heaps[WORKER],
        d1Total: heaps["d1:db"],
        v8All: Object.values(heaps).reduce((a, b) => a + b),
      };
      return { rss, ...v8, ...(gdb ? allocator(server) : {}) };
    },
    close: () => {
      for (const session of Object.values(sessions)) session.close();
    },
  };
}

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

/** Both passes on new servers: the RSS pass's rounds, the heap pass's one. */
async function measured() {
  const { dir, seed } = lib.seededState({ keyCount: 3 + 4 * WARMUP + 8 * ROUNDS });
  const config = lib.snapshot("api");
  const rss = await pass(config, dir, seed, settledRss, ROUNDS, { env: { BENCH_INSPECTOR: "1" } });
  const heap = await pass(config, dir, seed, liveHeap, 1, { env: { BENCH_INSPECTOR: "1" } });
  return { rss, heap };
}

async function main() {
  const params = { WARMUP, ROUNDS, WRITES, SETTLE_SECONDS, CLOSE_SECONDS };
  const { rss, heap, params: saved } = FROM ? JSON.parse(readFileSync(FROM, "utf8")) : await measured();
  const run = saved ?? params;
  const withAllocator = rss.every((r) => r.open.inUse !== undefined && r.pair.open.inUse !== undefined);
  const f = (mb) => mb.toFixed(1);
  const budget = BUDGET_MB * 1.048576;
  const labels = [...new Set(rss.map((r) => r.label))];
  const of = (rows, label) => rows.filter((r) => r.label === label);
  /** A paused phase's figures less its pair's, by name (`open.rss`): the median of its rounds, and each round's. */
  const value = (r, name) => name.split(".").reduce((x, part) => x?.[part], r);
  const growth = (rows, label, names) =>
    names.map((name) => {
      const each = of(rows, label).map((r) => value(r, name) - value(r.pair, name));
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
    const rssGrowth = growth(rss, label, ["open.rss", "after.rss", "peakRss"]);
    const v8Growth = growth(rss, label, ["open.v8Total", "after.v8Total"]);
    const [allGrowth, d1Growth] = [
      growth(rss, label, ["open.v8All", "after.v8All"]),
      growth(rss, label, ["open.d1Total"]),
    ];
    const allocated = withAllocator ? growth(rss, label, ["open.inUse", "after.inUse"]) : [];
    const heapGrowth = growth(heap, label, ["open", "after"]);
    const [held, heapMb] = [of(all, label).map((r) => r.held), heapGrowth.map((x) => x.median)];
    if (Math.max(...held) + Math.max(...heapMb) > budget)
      failures.push(`${label}: ${held.map(f)} MB held, live heap ${heapMb.map(f).join(" / ")} MB`);
    // Issue #78: the RSS grows by at most the budget, and comes back once they close (the medians:
    // a round's pair differs by tens of MB as V8 and the allocator keep or give back memory).
    if (rssGrowth[0].median > budget || rssGrowth[1].median > budget)
      failures.push(`${label}: RSS ${rssGrowth.slice(0, 2).map(shown).join(" / ")} MB above its pair`);
    const cells = (r) => `${r.admitted} · ${r.refused}${r.retryAfter ? ` (${r.retryAfter})` : ""}`;
    const list = (cell) => of(all, label).map(cell).join(", ");
    return [
      label,
      cells(of(rss, label)[0]),
      list((r) => `${r.ended}/${r.admitted}`),
      held.map(f).join(", "),
      heapGrowth.map(shown).join(" / "),
      v8Growth.map(shown).join(" / "),
      `${allGrowth.map(shown).join(" / ")}; D1's ${shown(d1Growth[0])}`,
      withAllocator ? allocated.map(shown).join(" / ") : "–",
      rssGrowth.map(shown).join(" / "),
    ];
  });
  // What the allocator gave back when asked (its free pages): RSS less RSS after, every measure.
  const returned = rss
    .flatMap((r) => [r, r.pair])
    .flatMap((r) => ["open", "after"].map((m) => r[m].rss - r[m].released));
  const head =
    "paused phase | admitted · 429 (Retry-After s) | ended by the Worker | held in the process for the paused clients, MB | " +
    "the isolate's live heap after a full collection, above its pair, MB: open / after close | " +
    "the isolate's V8 heap as it stands (garbage too), above its pair, MB: open / after close | " +
    "every V8 heap of the process (the local runtime's isolates too) as it stands, above its pair, MB: open / after close; the local D1's, open | " +
    "bytes workerd's allocator has out (buffers, the local D1), above its pair, MB: open / after close | " +
    "the process's RSS above its pair, MB: open / after close (judged: medians) / peak while written to";
  const verdict = failures.length
    ? `FAILED: ${failures.join("; ")}`
    : `passed: 10 of one key's 20 admitted, 40 of 4 keys'; paused streams over their share ended; the bytes the process held ` +
      `for them and the live heap's growth above their pairs, open and closed, within the ${BUDGET_MB} MiB budget; ` +
      "the RSS above its pair too, open and closed (medians)";
  const notes =
    `${run.WARMUP} warm-up phases, ${run.ROUNDS} rounds of 4 keys × 10 (the heap pass: 1); WRITES=${run.WRITES}, ` +
    `SETTLE_SECONDS=${run.SETTLE_SECONDS}, CLOSE_SECONDS=${run.CLOSE_SECONDS}. Lists: the RSS pass's rounds, then the heap pass's.` +
    (withAllocator
      ? ` The allocator's free pages, given back when asked at each measure: ${f(lib.median(returned))} MB (median; ` +
        `${f(Math.min(...returned))}–${f(Math.max(...returned))}).`
      : " No gdb: the allocator's figures are not read.");
  console.log(lib.report(lib.header("node bench/streams.mjs"), notes, lib.table(head, rows), verdict));
  if (!FROM) lib.saveResults("streams", { params, rss, heap, failures });
  if (failures.length) throw new Error(verdict);
}

lib.runMain(90, main);
