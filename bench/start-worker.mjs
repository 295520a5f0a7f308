#!/usr/bin/env node
// Starts one Worker for the bench the way `wrangler dev` does, but with the inspector off:
// wrangler's `unstable_startWorker({ dev: { inspector: false } })`. Runs as its own process
// (so its workerd children can be told apart from the bench's) until SIGTERM; prints `ready <url>`.
//
//   node bench/start-worker.mjs <wrangler config> <port, 0 for any> <persist dir> [NAME=value ...]
import { unstable_startWorker } from "wrangler";

const [config, port, persist, ...vars] = process.argv.slice(2);
const bindings = Object.fromEntries(
  vars.map((pair) => {
    const at = pair.indexOf("=");
    return [pair.slice(0, at), { type: "plain_text", value: pair.slice(at + 1) }];
  }),
);
const worker = await unstable_startWorker({
  config,
  bindings,
  sendMetrics: false,
  dev: {
    server: { hostname: "127.0.0.1", port: Number(port) },
    inspector: false,
    persist,
    watch: false,
    logLevel: "error",
    liveReload: false,
  },
});
await worker.ready;
console.log(`ready ${(await worker.url).href}`);
const stop = async () => {
  await worker.dispose();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
