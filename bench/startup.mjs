#!/usr/bin/env node
// `npm run bench:startup`: a new isolate of the API as it deploys (wrangler.toml `[env.*]`:
// scripts/build.mjs's code-split build) beside the floors — the minimal floor (bench/minimal: hono,
// @hono/zod-openapi, one route, `/openapi.json`, built as the API is built), the I/O floor
// (bench/io: that, with an authenticated read and a write doing one Durable Object call and one D1
// statement or batch) and the ladder floor (bench/ladder: the floor routes among the ladder's
// rungs and bindings, built with wrangler's defaults) — an empty Worker (what any Worker's start
// costs here) and, unless BUNDLE=0, the API as wrangler bundles it for `npm run dev`:
//
//  1. each built once as `wrangler deploy` builds it: its upload's size, gzip (wrangler's "Total
//     Upload");
//  2. ROUNDS (9) rounds, the order turned each: each started under `wrangler check startup`; in the
//     first COUNTS (3) rounds (0: none; valgrind only) its start, first read and first write
//     counted in instructions, and their sums, the cold read and write (bench/instructions.mjs).
import * as cold from "./instructions.mjs";
import * as lib from "./lib.mjs";

const [ROUNDS, COUNTS] = [lib.env("ROUNDS", 9), cold.hasValgrind() ? lib.env("COUNTS", 3) : 0];
const KINDS = ["empty", "api", "io", "ladder", "minimal", ...(lib.env("BUNDLE", 1) === 1 ? ["bundle"] : [])];
const command = `ROUNDS=${ROUNDS} COUNTS=${COUNTS} npm run bench:startup`;
const workers = KINDS.map((kind) => cold.worker(kind));
lib.runMain(120, () => cold.coldRun({ command, workers, rounds: ROUNDS, counts: Math.min(COUNTS, ROUNDS) }));
