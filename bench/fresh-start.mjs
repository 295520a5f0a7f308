#!/usr/bin/env node
// A newcomer's first `npm run dev`: from a state with no database to a served /healthz and the
// printed key's first answer (scripts/dev-server.mjs `startDevServer`, `fresh`), this tree beside
// the commit BASE (a git worktree, bench/lib.mjs `addWorktree`), ROUNDS (3) rounds, the order turned each; wall time, as a
// newcomer waits it. `BASE=<commit> node bench/fresh-start.mjs`
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as lib from "./lib.mjs";

const BASE = process.env.BASE;
const ROUNDS = lib.env("ROUNDS", 3);
const command = `BASE=${BASE} ROUNDS=${ROUNDS} node bench/fresh-start.mjs`;

lib.runMain(30, async () => {
  if (!BASE) throw new Error("BASE=<commit>: the tree to pair this one with");
  const base = lib.addWorktree(BASE, "base");
  try {
    const trees = { [BASE]: base, "this tree": lib.root };
    const seconds = { [BASE]: [], "this tree": [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 ? Object.keys(trees).reverse() : Object.keys(trees)) {
        const { startDevServer } = await import(join(trees[name], "scripts", "dev-server.mjs"));
        const started = Date.now();
        const server = await startDevServer(join(lib.tmp, `${name.replace(" ", "-")}-${round}`), {
          fresh: true,
        });
        const key = readFileSync(server.keyFile, "utf8").trim();
        const res = await fetch(`${server.base}/v1/projects`, { headers: { "x-api-key": key } });
        await res.arrayBuffer();
        seconds[name].push((Date.now() - started) / 1000);
        server.stop();
        if (res.status !== 200) throw new Error(`${name}: the printed key's first request: ${res.status}`);
        await lib.sleep(1500);
      }
    }
    const rows = Object.entries(seconds).map(([name, s]) => [
      name,
      lib.spread(s, 1),
      lib.median(s).toFixed(1),
    ]);
    const ratio = lib.pairedRatio(seconds["this tree"], seconds[BASE]).toFixed(2);
    console.log(
      lib.report(
        lib.header(command),
        lib.table("tree | s, median (min–max) | median s", rows),
        `this tree ÷ ${BASE}, paired by round: ${ratio}`,
      ),
    );
    lib.saveResults("fresh-start", { command, seconds });
  } finally {
    lib.removeWorktree(base);
  }
});
