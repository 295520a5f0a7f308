#!/usr/bin/env node
// Where a new isolate's first request goes: the API as it deploys (bench/split-build.mjs) started
// as a new process (bench/lib.mjs Server, as bench:startup starts it), then one first request to each of a ladder of paths, each
// in its own new process, the Worker process's CPU over it (schedstat), ROUNDS (5) rounds with the
// order turned each round. The rungs add one piece each: the app shell without auth (`/healthz`),
// a refusal without a key (the anonymous window's limiter call), with an unknown key (its hash and
// lookup too), a key's authentication and an operation without D1 of its own
// (`/v1/api-keys/current`), a project read (`/v1/projects/{id}`), a project list; and a project
// read as the second request of a process whose first was another operation (what building one
// more operation costs once the rest has run); and a project read by a key that has written, which
// starts from the key's bookmark (the other rungs' key never writes).
//
//   node bench/first-requests.mjs
import { dirname } from "node:path";
import * as lib from "./lib.mjs";
import { splitBuild } from "./split-build.mjs";

const ROUNDS = lib.env("ROUNDS", 5);

async function main() {
  const { dir, seed } = lib.seededState({ keyCount: 4, deploymentCount: 1, deep: false });
  const [key, project, vars] = [seed.bench.keys[0], seed.bench.project.id, lib.varsOf(seed).api];
  const config = await splitBuild(dirname(lib.snapshot("api", {})));
  const state = lib.copyState(dir, "api");
  const unknown = `dpk_${lib.hex(24)}`;
  // A write by the second key, so its limiter object holds a bookmark its reads start from.
  const writer = seed.bench.keys[1];
  const setup = await new lib.Server("api", config, state, vars).start();
  await setup.request("POST", "/v1/projects", { key: writer, body: { name: `f-${lib.hex(6)}` } });
  await setup.stop();
  const rungs = {
    "GET /healthz": { path: "/healthz" },
    "GET /v1/projects, no key (401)": { path: "/v1/projects", key: null },
    "GET /v1/projects, an unknown key (401)": { path: "/v1/projects", key: unknown },
    "GET /v1/api-keys/current": { path: "/v1/api-keys/current" },
    "GET /v1/projects/{id}": { path: `/v1/projects/${project}` },
    "GET /v1/projects": { path: "/v1/projects" },
    "GET /v1/projects/{id}, a key that has written": { path: `/v1/projects/${project}`, key: writer },
    "GET /v1/projects/{id} after GET /v1/api-keys/current": {
      path: `/v1/projects/${project}`,
      after: "/v1/api-keys/current",
    },
  };
  const cpu = Object.fromEntries(Object.keys(rungs).map((r) => [r, { first: [], second: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    const names = round % 2 ? Object.keys(rungs).reverse() : Object.keys(rungs);
    for (const name of names) {
      const server = await new lib.Server("api", config, state, vars).start();
      if (rungs[name].after) {
        await server.request("GET", rungs[name].after, { key });
        await server.quiet();
      }
      for (const which of ["first", "second"]) {
        const before = server.cpuNs();
        const { path, key: own = key } = rungs[name];
        await server.request("GET", path, { key: own ?? undefined, allowRefusal: true });
        cpu[name][which].push((server.cpuNs() - before) / 1e6);
      }
      await server.stop();
    }
    console.error(`bench: round ${round + 1}/${ROUNDS}`);
  }
  const rows = Object.entries(cpu).map(([name, { first, second }]) => [
    name,
    lib.spread(first),
    lib.spread(second),
  ]);
  console.log(lib.header(`node bench/first-requests.mjs (ROUNDS=${ROUNDS})`));
  console.log(lib.table(["a new process's", "first request: Worker CPU ms", "second request"], rows));
}

await main();
process.exit(0);
