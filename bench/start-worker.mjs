#!/usr/bin/env node
// Starts one Worker for the bench the way `wrangler dev` does, but with the inspector off:
// wrangler's `unstable_startWorker({ dev: { inspector: false } })`. Runs as its own process
// (so its workerd children can be told apart from the bench's) until SIGTERM; prints `ready <url>`.
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
    inspector: false,
    persist,
    watch: false,
    logLevel: "error",
    liveReload: false,
  },
});
await worker.ready;
console.log(`ready ${(await worker.url).href}`);
const stop = () => worker.dispose().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
