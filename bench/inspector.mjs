// What a Worker's JavaScript allocates, through `wrangler dev`'s inspector (bench/run.mjs --alloc).
//
// V8's sampling heap profiler (DevTools protocol `HeapProfiler.startSampling`), told to keep the
// samples of objects that the minor and major GCs have already collected, so the profile counts
// every byte allocated during a slice, not only what is still alive at its end. Allocations are
// sampled (one sample per `SAMPLING_INTERVAL` bytes on average), so a total is an estimate whose
// error shrinks with the bytes sampled: a slice of a few thousand requests samples megabytes.
// The Durable Objects of a Worker run in its isolate locally, so their allocations are counted
// too; the runtime's own C++ allocations (workerd, SQLite, D1's local simulator) are not.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";

const SAMPLING_INTERVAL = 4096;

/** One DevTools session with the Worker's isolate behind `wrangler dev --inspector-port <port>`. */
export async function connectInspector(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((t) => t.webSocketDebuggerUrl);
  if (!target) throw new Error(`no inspector target on :${port}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  const pending = new Map();
  let id = 0;
  ws.on("message", (data) => {
    const message = JSON.parse(String(data));
    const done = pending.get(message.id);
    if (!done) return;
    pending.delete(message.id);
    if (message.error) done.reject(new Error(`${message.error.message} (${message.error.code})`));
    else done.resolve(message.result);
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const i = ++id;
      pending.set(i, { resolve, reject });
      ws.send(JSON.stringify({ id: i, method, params }));
    });
  await send("HeapProfiler.enable");
  return {
    startAllocations: () =>
      send("HeapProfiler.startSampling", {
        samplingInterval: SAMPLING_INTERVAL,
        includeObjectsCollectedByMinorGC: true,
        includeObjectsCollectedByMajorGC: true,
      }),
    /** Stops sampling: the bytes allocated since `startAllocations`, in total and by module. */
    stopAllocations: async (moduleAt) =>
      summarizeAllocations((await send("HeapProfiler.stopSampling")).profile, moduleAt),
    close: () => ws.close(),
  };
}

/**
 * The source module of each line of the bundle `wrangler dev` built from `projectDir` (esbuild
 * marks where each module starts with a `// <path>` comment), as `(line) => module`; null when no
 * bundle is found.
 */
export function bundleModules(projectDir) {
  const tmp = join(projectDir, ".wrangler", "tmp");
  let newest;
  try {
    for (const dir of readdirSync(tmp)) {
      // Named after the entry point: index.js for src/index.ts, worker.js for the ladder's worker.ts.
      for (const name of ["index.js", "worker.js"]) {
        const file = join(tmp, dir, name);
        try {
          const mtime = statSync(file).mtimeMs;
          if (!newest || mtime > newest.mtime) newest = { file, name, mtime };
        } catch {}
      }
    }
  } catch {
    return null;
  }
  if (!newest) return null;
  const modules = [];
  let current = "(bundle prelude)";
  for (const line of readFileSync(newest.file, "utf8").split("\n")) {
    const start = /^\/\/ ((?:src|node_modules|bench|\.\.)\/\S+|worker\.ts)$/.exec(line);
    if (start) current = start[1].replace(/^.*node_modules\//, "");
    modules.push(current);
  }
  const moduleAt = (line) => modules[line] ?? "(bundle)";
  moduleAt.bundle = newest.name;
  return moduleAt;
}

/**
 * A sampling heap profile, summed: `total` bytes, and `byModule`: the bundle's source module of
 * the function that allocated (with `moduleAt`, else the function's name and line), the runtime's
 * own JavaScript by its name (`cloudflare-internal:d1-api`), and native frames (`(V8 API)`, …)
 * under the module of the nearest bundled caller.
 */
export function summarizeAllocations(profile, moduleAt) {
  const byModule = new Map();
  let total = 0;
  const stack = [{ node: profile.head, caller: "(runtime)" }];
  while (stack.length > 0) {
    const { node, caller } = stack.pop();
    const { functionName, url, lineNumber } = node.callFrame;
    const bundled = url !== "" && url.replace(/^.*\//, "") === (moduleAt?.bundle ?? "index.js");
    let where;
    if (bundled)
      where = moduleAt ? moduleAt(lineNumber) : `${functionName || "(anonymous)"} ${url}:${lineNumber + 1}`;
    else if (url) where = url;
    else where = `${functionName || "(native)"} ← ${caller}`;
    if (node.selfSize > 0) {
      byModule.set(where, (byModule.get(where) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) stack.push({ node: child, caller: bundled || url ? where : caller });
  }
  return { total, byModule };
}
