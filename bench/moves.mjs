#!/usr/bin/env node
// Moving an organization between databases while it keeps working (API_CONTRACT §32, issue #77).
// One API server (lib.apiServer, MOVE_SETTLE_MS=1000 as .dev.vars.example), organizations in DB
// filled to about SIZES rows (lib.fill: PATCHes of 500 new string variables, ~1,002 rows each: the
// variables, their version values, the version and its audit entry), and one that stays in DB_ORG_2.
// Each round moves each organization in turn (DB → DB_ORG_2, the next round back), the order turned
// every round, while a writer creates a variable of it through the public API one request after
// another (a 408 is retried after RETRY_MS, not Retry-After's whole second, so a pause is seen to
// 0.1 s) and the staying organization's variables are read every 100 ms. Per move: the total time
// (the 202 until the move reads `completed`, which includes the settle and the source's cleanup),
// `rows_copied`, the longest gap between two consecutive successful writes, the longest single
// write, the 408s, the staying organization's longest read, and every answer that was neither 2xx
// nor 408. Each request's start, ms and status: bench/results/moves-*.json.
//
//   node bench/moves.mjs     env: ROUNDS (2) SIZES (10000,100000) RETRY_MS (100)
import * as lib from "./lib.mjs";

const [ROUNDS, RETRY_MS] = [lib.env("ROUNDS", 2), lib.env("RETRY_MS", 100)];
const SIZES = (process.env.SIZES ?? "10000,100000").split(",").map(Number);

/**
 * `org`'s `request` (its `body` a function, if any) sent one after another until `stop.done`, `pace` ms
 * apart (a 408 retried after RETRY_MS): the answers (each timed), the longest, the longest gap between
 * two successes.
 */
async function loop(org, stop, { method = "GET", path, body }, pace = 0) {
  const w = { ok: 0, refused: 0, other: [], longest: 0, gap: 0, samples: [] };
  let last = performance.now();
  while (!stop.done) {
    const at = performance.now();
    const answer = await org.server
      .request(method, path, { key: org.key, body: body?.(), allowRefusal: true })
      .catch((err) => ({ status: `${err.name}: ${err.message}`, ms: 0 }));
    w.longest = Math.max(w.longest, answer.ms);
    w.samples.push([Math.round(at), Math.round(answer.ms), answer.status]);
    if (answer.status < 300) {
      w.ok++;
      w.gap = Math.max(w.gap, performance.now() - last);
      last = performance.now();
    } else if (answer.status === 408) w.refused++;
    else w.other.push(`${answer.status} ${answer.body?.code ?? ""}`);
    await lib.sleep(answer.status === 408 ? RETRY_MS : pace);
  }
  w.gap = Math.max(w.gap, performance.now() - last);
  return w;
}

/**
 * Moves `org` to `to` while a writer creates its variables and `other` (an organization that
 * stays) is read every 100 ms: the move as it ended, its total ms, when it first read `switching`,
 * the writer's figures and the other organization's.
 */
async function moveWhileWriting(org, to, other) {
  const stop = { done: false };
  const writing = loop(org, stop, lib.variableCreate(org));
  const reading = loop(other, stop, { path: `/v1/environments/${other.env}/variables?limit=1` }, 100);
  await lib.sleep(1000);
  const start = performance.now();
  const admin = (method, path, body) => lib.internal(org.server, method, path, body);
  let move = await admin("POST", `/orgs/${org.id}/moves`, { to });
  const states = [];
  while (!["completed", "cancelled", "failed"].includes(move.state)) {
    if (performance.now() - start > 20 * 60_000) throw new Error(`move ${move.id} still ${move.state}`);
    await lib.sleep(100);
    move = await admin("GET", `/moves/${move.id}`);
    states.push([Math.round(performance.now() - start), move.state, move.rows_copied]);
  }
  const ms = performance.now() - start;
  await lib.sleep(1000);
  stop.done = true;
  const database = (await admin("GET", `/orgs/${org.id}`)).database;
  const switching = states.find(([, state]) => state !== "copying")?.[0];
  return { move, ms, switching, database, start, states, ...(await writing), staying: await reading };
}

async function main() {
  const server = await lib.apiServer({ MOVE_SETTLE_MS: "1000" });
  const other = await lib.newOrg(server, "staying", "DB_ORG_2");
  const orgs = [];
  for (const rows of SIZES) {
    const org = await lib.newOrg(server, `moving-${rows}`);
    await lib.fill(org, rows);
    orgs.push({ rows, org, moves: [] });
    console.error(`bench: organization of ~${rows} rows seeded`);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const to = round % 2 ? "DB" : "DB_ORG_2";
    for (const o of round % 2 ? [...orgs].reverse() : orgs) {
      const m = await moveWhileWriting(o.org, to, other);
      o.moves.push(m);
      console.error(`bench: round ${round + 1}: ~${o.rows} rows → ${to}: ${m.move.state} in ${m.ms} ms`);
    }
  }
  const s = (ms) => (ms / 1000).toFixed(2);
  const rows = orgs.flatMap(({ rows, moves }) =>
    moves.map((m, round) => [
      `~${rows.toLocaleString("en")} rows, round ${round + 1} → ${m.move.to}`,
      `${m.move.state}${m.database === m.move.to ? "" : ` (database reads ${m.database})`}`,
      m.move.rows_copied,
      s(m.ms),
      s(m.switching),
      s((m.ms / m.move.rows_copied) * 10_000),
      s(m.gap),
      s(m.longest),
      `${m.ok} / ${m.refused}`,
      s(m.staying.longest),
      [...m.other, ...m.staying.other].join(", ") || "none",
    ]),
  );
  const [small, large] = [orgs[0].moves, orgs.at(-1).moves];
  const ratio = (f) => lib.spread(large.map((m, i) => f(m) / f(small[i])));
  const marginal = large.map(
    (m, i) => (m.ms - small[i].ms) / (m.move.rows_copied - small[i].move.rows_copied),
  );
  const command = `ROUNDS=${ROUNDS} SIZES=${SIZES.join(",")} RETRY_MS=${RETRY_MS} node bench/moves.mjs`;
  const report = lib.report(
    lib.header(command),
    lib.table(
      "move | state | rows_copied | total s | reads switching at s | s per 10,000 rows | longest gap between " +
        "writes s | longest write s | writes 201 / 408 | another organization's longest read s | answers " +
        "neither 2xx nor 408",
      rows,
    ),
    `largest ÷ smallest, paired by round, median (min–max): total time ${ratio((m) => m.ms)}, ` +
      `rows ${ratio((m) => m.move.rows_copied)}, longest gap ${ratio((m) => m.gap)}, longest write ` +
      `${ratio((m) => m.longest)}; marginal s per 10,000 rows (difference of the two): ` +
      `${lib.spread(marginal.map((x) => x * 10))}`,
  );
  console.log(report);
  lib.saveResults("moves", { report, orgs: orgs.map(({ rows, moves }) => ({ rows, moves })) });
  await server.stop();
}

lib.runMain(90, main);
