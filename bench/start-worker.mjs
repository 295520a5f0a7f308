#!/usr/bin/env node
// Starts one Worker for the bench the way `wrangler dev` does, but with the inspector off:
// wrangler's `unstable_startWorker({ dev: { inspector: false } })`. Runs as its own process
// (so its workerd children can be told apart from the bench's) until SIGTERM; prints `ready <url>`.
// BENCH_INSPECTOR=1: the inspector on, its URL printed first (`inspector <url>`), for a bench that
// reads the Worker's V8 heap (bench/streams.mjs).
//
//   node bench/start-worker.mjs <wrangler config> <persist dir> <vars as JSON: { NAME: value, … }>
import { unstable_startWorker } from "wrangler";

const [config, persist, vars] = process.argv.slice(2);
const plain = ([name, value]) => [name, { type: "plain_text", value }];
const bindings = Object.fromEntries(Object.entries(JSON.parse(vars)).map(plain));
const worker = await unstable_startWorker({
  config,
  bindings,
  sendMetrics: false,
  dev: {
    server: { hostname: "127.0.0.1", port: 0 },
    inspector: process.env.BENCH_INSPECTOR === "1" ? { hostname: "127.0.0.1", port: 0 } : false,
    persist,
    watch: false,
    logLevel: "error",
    liveReload: false,
  },
});
await worker.ready;
if (process.env.BENCH_INSPECTOR === "1") console.log(`inspector ${(await worker.inspectorUrl)?.href}`);
console.log(`ready ${(await worker.url).href}`);
const stop = () => worker.dispose().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
