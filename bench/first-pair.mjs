#!/usr/bin/env node
import * as lib from "./lib.mjs";
import { withBaseBuild } from "./split-build.mjs";

const ROUNDS = lib.env("ROUNDS", 9);
const BASE = process.env.BASE;
const API_PATH = process.env.PATH_OF_API ?? "/v1/projects/{project}";

async function main() {
  await withBaseBuild(BASE, async (configs) => {
    const { dir, seed } = lib.seededState({ keyCount: 4, deploymentCount: 1, deep: false });
    const vars = lib.varsOf(seed);
    const project = seed.bench.project.id;
    const read = API_PATH.replace("{project}", project)
      .replace("{environment}", seed.bench.project.env)
      .replace("{deployment}", seed.bench.deployments[0]);
    const [reader, writer] = seed.bench.keys;
    const builds = {
      this: { config: configs.this, vars: vars.api, read, write: "/v1/projects" },
      base: { config: configs.base, vars: vars.api, read, write: "/v1/projects" },
      floor: {
        config: lib.snapshot("ladder"),
        vars: vars.ladder,
        read: `/floor/projects/${project}`,
        write: "/write/project",
      },
    };
    // The ladder's floor write: the write rung through OpenAPIHono and a zod-openapi route.
    builds.floorWrite = { ...builds.floor, read: undefined, write: "/floor/projects" };
    const cpu = Object.fromEntries(Object.keys(builds).map((name) => [name, { read: [], write: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      const order =
        round % 2 ? ["this", "floor", "floorWrite", "base"] : ["base", "floorWrite", "floor", "this"];
      for (const kind of ["read", "write"]) {
        for (const name of order.filter((n) => builds[n][kind])) {
          const b = builds[name];
          const server = await new lib.Server(
            name,
            b.config,
            lib.copyState(dir, `${name}-${round}-${kind}`),
            b.vars,
          ).start();
          const before = server.cpuNs();
          const body = kind === "write" ? { name: `f-${lib.hex(6)}` } : undefined;
          const res = await server.request(body ? "POST" : "GET", b[kind], {
            key: kind === "read" ? reader : writer,
            body,
          });
          if (res.status >= 300) throw new Error(`${name} ${kind}: ${res.status}`);
          cpu[name][kind].push((server.cpuNs() - before) / 1e6);
          await server.stop();
        }
      }
      console.error(`bench: round ${round + 1}/${ROUNDS}`);
    }
    const ratio = (kind, a, b) => lib.spread(cpu[a][kind].map((x, i) => x / cpu[b][kind][i]));
    console.log(lib.header(`BASE=${BASE} node bench/first-pair.mjs (ROUNDS=${ROUNDS})`));
    console.log(
      lib.table(
        ["a new isolate's first request: Worker CPU ms", `GET ${API_PATH}, median (min–max)`, "write"],
        [
          ["this tree", lib.spread(cpu.this.read, 1), lib.spread(cpu.this.write, 1)],
          [`BASE ${BASE}`, lib.spread(cpu.base.read, 1), lib.spread(cpu.base.write, 1)],
          [
            "ladder floor (floor route; write rung)",
            lib.spread(cpu.floor.read, 1),
            lib.spread(cpu.floor.write, 1),
          ],
          ["ladder floor write (POST /floor/projects)", "–", lib.spread(cpu.floorWrite.write, 1)],
          [
            "this tree ÷ BASE, paired by round",
            ratio("read", "this", "base"),
            ratio("write", "this", "base"),
          ],
          [
            "this tree ÷ floor (the write rung)",
            ratio("read", "this", "floor"),
            ratio("write", "this", "floor"),
          ],
          ["BASE ÷ floor (the write rung)", ratio("read", "base", "floor"), ratio("write", "base", "floor")],
          ["this tree ÷ floor write", "–", ratio("write", "this", "floorWrite")],
          ["BASE ÷ floor write", "–", ratio("write", "base", "floorWrite")],
        ],
      ),
    );
  });
}

lib.runMain(30, main);
