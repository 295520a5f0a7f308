#!/usr/bin/env node
// `npm run bench:startup`: a new isolate of the API as it deploys beside the minimal, I/O and ladder
// floors, an empty Worker and, unless BUNDLE=0, the API as wrangler bundles it for `npm run dev`
// (bench/METHOD.md has each): each built once as `wrangler deploy` builds it (its upload's size),
// then ROUNDS (9) rounds, the order turned each, each Worker started under `wrangler check startup`
// and, in the first COUNTS (3) rounds (0: none; valgrind only), its start, first read and first
// write counted in instructions, and their sums, the cold read and write (bench/instructions.mjs).
import * as cold from "./instructions.mjs";
import * as lib from "./lib.mjs";

const [ROUNDS, COUNTS] = [lib.env("ROUNDS", 9), cold.hasValgrind() ? lib.env("COUNTS", 3) : 0];
const KINDS = ["empty", "api", "io", "ladder", "minimal", ...(lib.env("BUNDLE", 1) === 1 ? ["bundle"] : [])];
const command = `ROUNDS=${ROUNDS} COUNTS=${COUNTS} npm run bench:startup`;
const workers = KINDS.map((kind) => cold.worker(kind));
lib.runMain(120, () => cold.coldRun({ command, workers, rounds: ROUNDS, counts: Math.min(COUNTS, ROUNDS) }));
