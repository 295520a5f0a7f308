#!/usr/bin/env node
// A new isolate's cold read and write in instructions (bench/instructions.mjs), ROUNDS (3) rounds:
// the API as it deploys beside the I/O, ladder and minimal floors, each Worker's start and its first
// read (`GET /v1/projects/{id}` by a key that never writes) and first write (`POST /v1/projects`).
//
//   node bench/first-instructions.mjs   # BASE=<commit>: that commit's API beside; DECOMPOSE=1 the
//                                       # rows below (ONLY=<regexp> picks); CALLGRIND_OUT=<dir> keeps dumps
//   MODULES=250 node bench/first-instructions.mjs   # what a module costs a start by being uploaded
//
// DECOMPOSE=1: the API's first `/healthz` (the app shell: no key, limiter or D1), a `/v1` request
// without a key (its 401), `GET /v1/api-keys/current` (what any authenticated first request pays),
// then the read and the write after it (what building their operation adds), and warm ones.
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as cold from "./instructions.mjs";
import * as lib from "./lib.mjs";

const ROUNDS = lib.env("ROUNDS", 3);
const BASE = process.env.BASE;
const ONLY = new RegExp(process.env.ONLY ?? "");

/** The DECOMPOSE rows of the API `w`, by label. */
function decomposed(w, seed, state) {
  const { read, write } = cold.firstRequests(w, seed, state);
  const current = (r) => ({ ...r, method: "GET", path: "/v1/api-keys/current", body: undefined });
  const rows = {
    "GET /healthz (no key, no limiter, no D1)": { ...read, path: "/healthz", key: undefined },
    "GET /v1/projects without a key (401)": { ...read, path: "/v1/projects", key: undefined, refused: true },
    "GET /v1/api-keys/current": current(read),
    "the read, after it": { ...read, after: [current(read)] },
    "the write, after it": { ...write, after: [current(write)] },
    "a write after two (warm)": { ...write, after: [write, write] },
    "a read after two (warm)": { ...read, after: [read, read] },
  };
  const entries = Object.entries(rows).map(([label, row]) => [`${w.name.split(" (")[0]}: ${label}`, row]);
  return Object.fromEntries(entries.filter(([label]) => ONLY.test(label)));
}

async function run(configs) {
  const workers = ["empty", "api", "io", "ladder", "minimal"].map((kind) => cold.worker(kind));
  workers[1].config = configs.this;
  if (BASE)
    workers.splice(2, 0, cold.worker("api", { kind: "base", name: `BASE ${BASE}`, config: configs[BASE] }));
  const rows = (seed, state) =>
    process.env.DECOMPOSE
      ? Object.assign({}, ...workers.filter((w) => w.api).map((w) => decomposed(w, seed, state)))
      : {};
  const command = `${BASE ? `BASE=${BASE} ` : ""}ROUNDS=${ROUNDS} node bench/first-instructions.mjs`;
  await cold.coldRun({ command, workers, rows, rounds: ROUNDS, counts: ROUNDS });
}

/**
 * MODULES=n: the empty Worker's start alone and with n one-line modules beside it that nothing
 * imports (as the split build's chunks are, until an operation loads them), in turns, ROUNDS each:
 * what workerd spends on a module for its being in the upload, whatever its size.
 */
async function moduleCost(n) {
  const w = await cold.build(cold.worker("empty"), {});
  const files = Array.from({ length: n }, (_, i) => join(w.modules, `extra${i}.js`));
  const starts = { alone: [], beside: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const beside of round % 2 ? [true, false] : [false, true]) {
      for (const [i, file] of files.entries()) {
        if (beside)
          writeFileSync(file, `export const v = () => ${i};\nexport function f(a) { return a + ${i}; }\n`);
        else rmSync(file, { force: true });
      }
      starts[beside ? "beside" : "alone"].push(cold.countStart(w).all);
    }
  }
  const [alone, beside] = [lib.median(starts.alone), lib.median(starts.beside)];
  console.log(
    `${lib.header(`MODULES=${n} ROUNDS=${ROUNDS} node bench/first-instructions.mjs`)}\n\nThe empty Worker starts in ` +
      `${alone.toFixed(1)} M instructions alone, ${beside.toFixed(1)} M with ${n} modules beside it: ` +
      `${((beside - alone) / n).toFixed(3)} M a module.`,
  );
}

async function main() {
  if (!cold.hasValgrind()) throw new Error("valgrind is not installed (apt-get install valgrind)");
  if (process.env.MODULES) return moduleCost(lib.env("MODULES", 0));
  if (BASE) await lib.withBaseBuilds([BASE], run);
  else await run({ this: await lib.splitBuild(dirname(lib.snapshot("api", {}))) });
}

lib.runMain(150, main);
