#!/usr/bin/env node
import autocannon from "autocannon";
import * as lib from "./lib.mjs";
import { withBaseBuild } from "./split-build.mjs";

const [PAIRS, SECONDS] = [lib.env("PAIRS", 8), lib.env("SECONDS", 3)];
const BASE = process.env.BASE;
/** WRITE=1: `POST /v1/projects` (a new name each) beside the ladder's floor write, instead of a read. */
const WRITE = lib.env("WRITE", 0) === 1;
const API_PATH = WRITE ? "/v1/projects" : (process.env.PATH_OF_API ?? "/v1/projects/{id}");

async function main() {
  await withBaseBuild(BASE, async (configs) => {
    const { dir, seed } = lib.seededState({ keyCount: 24, deploymentCount: 1, deep: false });
    const vars = lib.varsOf(seed);
    const servers = {
      this: await new lib.Server("this", configs.this, lib.copyState(dir, "this"), vars.api).start(),
      base: await new lib.Server("base", configs.base, lib.copyState(dir, "base"), vars.api).start(),
      floor: await new lib.Server(
        "floor",
        lib.snapshot("ladder"),
        lib.copyState(dir, "floor"),
        vars.ladder,
      ).start(),
    };
    const project = seed.bench.project.id;
    const paths = {
      this: API_PATH.replace("{id}", project),
      base: API_PATH.replace("{id}", project),
      floor: WRITE ? "/floor/projects" : `/floor/projects/${project}`,
    };
    const keys = seed.bench.keys.slice(0, 20);
    for (const name of Object.keys(servers)) await slice(servers[name], paths[name], keys, 2);
    const cpu = { this: [], base: [], floor: [] };
    for (let round = 0; round < PAIRS; round++) {
      const order = round % 2 ? ["this", "floor", "base"] : ["base", "floor", "this"];
      for (const name of order) cpu[name].push(await slice(servers[name], paths[name], keys, SECONDS));
      console.error(`bench: round ${round + 1}/${PAIRS}`);
    }
    const ratio = (a, b) => lib.spread(cpu[a].map((x, i) => x / cpu[b][i]));
    const command = `${WRITE ? "WRITE=1 " : ""}BASE=${BASE} node bench/warm-pair.mjs`;
    console.log(lib.header(`${command} (PAIRS=${PAIRS}, SECONDS=${SECONDS})`));
    console.log(
      lib.table(
        [`${WRITE ? "POST" : "GET"} ${API_PATH}, warm: Worker CPU ms per request`, "median (min–max)"],
        [
          ["this tree", lib.spread(cpu.this, 3)],
          [`BASE ${BASE}`, lib.spread(cpu.base, 3)],
          [`ladder floor (${WRITE ? "its floor write" : "its floor route"})`, lib.spread(cpu.floor, 3)],
          ["this tree ÷ BASE, paired by round", ratio("this", "base")],
          ["this tree ÷ floor", ratio("this", "floor")],
          ["BASE ÷ floor", ratio("base", "floor")],
        ],
      ),
    );
    for (const server of Object.values(servers)) await server.stop();
  });
}

/** `seconds` of autocannon on `path`, each request the next key: the Worker's CPU ms per response. */
function slice(server, path, keys, seconds) {
  const before = server.cpu();
  let k = 0;
  const setupRequest = (req) => ({
    ...req,
    path,
    headers: { ...req.headers, accept: "application/json", "x-api-key": keys[k++ % keys.length] },
    ...(WRITE
      ? {
          method: "POST",
          body: JSON.stringify({ name: `w-${lib.hex(8)}` }),
          headers: {
            ...req.headers,
            accept: "application/json",
            "content-type": "application/json",
            "x-api-key": keys[k++ % keys.length],
          },
        }
      : {}),
  });
  const options = { url: server.base, connections: 10, duration: seconds, requests: [{ setupRequest }] };
  return new Promise((resolve, reject) =>
    autocannon(options, (err, res) => {
      if (err) return reject(err);
      if (res.non2xx) return reject(new Error(`${server.name}: ${res.non2xx} answers not 2xx on ${path}`));
      resolve((1000 * (server.cpu() - before)) / Math.max(1, res.requests.total));
    }),
  );
}

lib.runMain(30, main);
