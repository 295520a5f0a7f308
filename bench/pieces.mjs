#!/usr/bin/env node
// What each piece of the API's request path costs the runtime, one at a time (issue #12).
//
// The end-to-end bench (bench/run.mjs) cannot see a change under ~0.15× of the rung: two
// processes of the same code stand that far apart. The pieces that separate an API read from the
// ladder's rung are each far smaller than that, so this measures them alone: bench/pieces/worker.ts
// runs one piece N times inside one request, in workerd as `wrangler dev` runs it (inspector off,
// bench/start-worker.mjs), and the request's wall time over N is the piece's cost. The pieces are
// interleaved over ROUNDS rounds; each figure is the median over the rounds (min–max beside it)
// and its ratio to the `response` piece (a JSON Response, which every answer pays) of the same round.
//
//   node bench/pieces.mjs        env: ROUNDS (7) N (20000 iterations per piece per round; N / 20 for
//                                the local D1 statements, each about a millisecond)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const N = Number(process.env.N ?? 20_000);
const PORT = 8798;
const persist = mkdtempSync(join(tmpdir(), "bench-pieces-"));
const base = `http://127.0.0.1:${PORT}`;

const server = spawn(
  process.execPath,
  [join(here, "start-worker.mjs"), join(here, "pieces", "wrangler.toml"), String(PORT), persist],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const stop = () => {
  server.kill("SIGTERM");
  rmSync(persist, { recursive: true, force: true });
};
const hardStop = setTimeout(() => {
  console.error("bench: pieces took over 10 minutes; stopping");
  stop();
  process.exit(1);
}, 10 * 60_000);
try {
  await new Promise((resolve, reject) => {
    server.stdout.on("data", (chunk) => String(chunk).includes("ready") && resolve());
    server.once("exit", (code) => reject(new Error(`the pieces worker exited (${code})`)));
  });
  const { pieces } = await (await fetch(`${base}/`)).json();
  const run = async (piece, n) => {
    const started = process.hrtime.bigint();
    const res = await fetch(`${base}/${encodeURIComponent(piece)}?n=${n}`);
    if (!res.ok) throw new Error(`${piece} → ${res.status}`);
    await res.json();
    return Number(process.hrtime.bigint() - started) / n / 1000; // µs per run of the piece
  };
  // A statement of local D1 takes about a millisecond: those pieces run N / 20 times.
  const runsOf = (piece) => (piece.startsWith("D1 ") ? Math.ceil(N / 20) : N);
  for (const piece of pieces) await run(piece, Math.min(runsOf(piece), 2000)); // compiled before anything is timed
  const perRound = Object.fromEntries(pieces.map((p) => [p, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const piece of pieces) perRound[piece].push(await run(piece, runsOf(piece)));
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = s.length >> 1;
    return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  };
  const us = (x) => x.toFixed(1);
  console.log(
    `${new Date().toISOString()} · node ${process.version} · ${ROUNDS} interleaved rounds × ${N} runs per piece\n`,
  );
  console.log("| piece | µs per run, median (min–max) | ÷ `response` |");
  console.log("|---|---|---|");
  for (const piece of pieces) {
    const xs = perRound[piece];
    const ratio = median(xs.map((x, i) => x / perRound.response[i]));
    console.log(
      `| ${piece} | ${us(median(xs))} (${us(Math.min(...xs))}–${us(Math.max(...xs))}) | ${ratio.toFixed(2)} |`,
    );
  }
} finally {
  clearTimeout(hardStop);
  stop();
}
