#!/usr/bin/env node
// Part five's costs (issue #80), on one API server (bench/moves.mjs' `apiServer`, its D1 statements
// counted by bench/count-d1.mjs) and organizations made as bench/moves.mjs makes them:
//
// 1. §29: a variable create (`POST /v1/environments/{id}/variables`, one string) in an environment
//    of an organization holding VARIABLES variables (PATCHes of 500 names, all in that environment)
//    beside the same create in an empty organization: ROUNDS rounds of SAMPLES creates of each, in
//    turn (lib.sideBySide: the Worker's schedstat CPU per request, ratios paired within a round),
//    and the D1 statements and round trips of one create of each (`GET /__bench/d1`).
// 2. §30: for each of RATES, a new organization with an enabled audit stream to a receiver on
//    127.0.0.1 writes that many audited changes a second (variable creates, sent on a fixed
//    schedule whatever the answers) for SECONDS: the stream's largest `pending` (read every 250 ms)
//    and the delay from each entry's `created_at` to its receipt, until every entry is in. The
//    lower rate first: a rate the local Worker cannot answer leaves a backlog (its queue's wake-ups).
//
//   node bench/part-five.mjs     env: ROUNDS (5) SAMPLES (40) VARIABLES (20000) RATES (20,50) SECONDS (20)
import { createServer } from "node:http";
import * as lib from "./lib.mjs";
import { apiServer, fill, newOrg } from "./moves.mjs";

const [ROUNDS, SAMPLES, VARIABLES] = [
  lib.env("ROUNDS", 5),
  lib.env("SAMPLES", 40),
  lib.env("VARIABLES", 20_000),
];
const RATES = (process.env.RATES ?? "20,50").split(",").map(Number);
const SECONDS = lib.env("SECONDS", 20);
const create = (org) => ({
  method: "POST",
  path: `/v1/environments/${org.env}/variables`,
  key: org.key,
  body: () => ({ name: `C_${lib.hex(6)}`, type: "string", value: lib.hex(8) }),
});

/** The D1 statements and round trips of one request (and what it leaves running for 0.5 s). */
async function statementsOf(server, { method, path, key, body }) {
  const before = await server.json("GET", "/__bench/d1");
  await server.request(method, path, { key, body: body() });
  await lib.sleep(500);
  const after = await server.json("GET", "/__bench/d1");
  return `${after.statements - before.statements} / ${after.roundTrips - before.roundTrips}`;
}

async function createCost(server) {
  const [empty, full] = [await newOrg(server, "empty"), await newOrg(server, "full")];
  // Every name in the create's own environment (fill's `perScope`): the organization's and the scope's size.
  await fill(full, (VARIABLES / 500) * 1002, Number.POSITIVE_INFINITY);
  const c = { server };
  const requests = { empty: create(empty), [`${VARIABLES} variables`]: create(full) };
  await lib.sideBySide(c, 5, requests); // warm both
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push(await lib.sideBySide(c, SAMPLES, requests));
  const statements = [await statementsOf(server, create(empty)), await statementsOf(server, create(full))];
  return { rounds, statements };
}

async function streamLag(server, rate) {
  const org = await newOrg(server, `streamed-${rate}`);
  const received = new Map();
  let [batches, duplicates] = [[], 0];
  const receiver = createServer((req, res) => {
    let text = "";
    req.on("data", (d) => (text += d));
    req.on("end", () => {
      batches.push([Math.round(performance.now()), text.split("\n").filter(Boolean).length]);
      for (const line of text.split("\n").filter(Boolean)) {
        const entry = JSON.parse(line);
        if (received.has(entry.sequence)) duplicates++;
        else received.set(entry.sequence, Date.now() - Date.parse(entry.created_at));
      }
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${receiver.address().port}/audit`;
  const stream = await server.json("POST", `/v1/orgs/${org.id}/audit-streams`, {
    key: org.key,
    body: { name: "bench", url },
  });
  const read = () => server.json("GET", `/v1/audit-streams/${stream.id}`, { key: org.key });
  let [maxPending, polling, pendings] = [0, true, []];
  const poller = (async () => {
    while (polling) {
      const { pending } = await read();
      pendings.push([Math.round(performance.now()), pending]);
      maxPending = Math.max(maxPending, pending);
      await lib.sleep(250);
    }
  })();
  const { method, path, key, body } = create(org);
  const statuses = {};
  const start = performance.now();
  const sent = [];
  for (let i = 0; i < rate * SECONDS; i++) {
    await lib.sleep(start + (i * 1000) / rate - performance.now());
    const answer = server.request(method, path, { key, body: body(), allowRefusal: true });
    sent.push(answer.then(({ status }) => (statuses[status] = (statuses[status] ?? 0) + 1)));
  }
  await Promise.all(sent);
  const writing = (performance.now() - start) / 1000;
  let last = await read();
  for (let i = 0; i < 480 && (last.pending > 0 || !received.has(last.delivered_through)); i++) {
    await lib.sleep(250);
    last = await read();
  }
  polling = false;
  await poller;
  receiver.close();
  const delays = [...received.values()];
  const first = Math.min(...received.keys());
  const missing = last.delivered_through - first + 1 - received.size;
  const drained = (batches.at(-1)[0] - start) / 1000 - writing;
  return {
    rate,
    statuses,
    writing,
    drained,
    maxPending,
    delays,
    batches,
    duplicates,
    missing,
    last,
    pendings,
    start,
  };
}

async function main() {
  const server = await apiServer({ ALLOW_INSECURE_WEBHOOKS: "true" }, { countD1: true });
  const cost = await createCost(server);
  console.error("bench: creates done");
  const lags = [];
  for (const rate of RATES) {
    await server.quiet();
    lags.push(await streamLag(server, rate));
  }
  await server.stop();
  const label = `${VARIABLES} variables`;
  const figure = (name, d = 2) =>
    lib.spread(
      cost.rounds.map((r) => r[name]),
      d,
    );
  const command = `ROUNDS=${ROUNDS} SAMPLES=${SAMPLES} VARIABLES=${VARIABLES} RATES=${RATES.join(",")} SECONDS=${SECONDS} node bench/part-five.mjs`;
  const report = lib.report(
    lib.header(command),
    lib.table(
      [
        "§29 variable create",
        "Worker CPU ms, median of rounds (min–max)",
        "p50 ms",
        "D1 statements / round trips",
      ],
      [
        ["in an empty organization", figure("empty CPU ms"), figure("empty p50 ms"), cost.statements[0]],
        [`in one of ${label}`, figure(`${label} CPU ms`), figure(`${label} p50 ms`), cost.statements[1]],
        [`${label} ÷ empty, paired`, figure(`${label} ÷ empty: CPU`), figure(`${label} ÷ empty: ms`), ""],
      ],
    ),
    lib.table(
      [
        "§30 stream, entries offered per s",
        "written (answers)",
        "answered per s",
        "largest pending",
        "created_at → receipt ms p50 / p99 / max",
        "last receipt after the last answer s",
        "batches, again, missing",
        "pending, last_error at the end",
      ],
      lags.map((lag) => [
        lag.rate,
        `${lag.statuses[201] ?? 0} (${JSON.stringify(lag.statuses)})`,
        ((lag.statuses[201] ?? 0) / lag.writing).toFixed(1),
        lag.maxPending,
        [50, 99, 100].map((p) => lib.percentile(lag.delays, p)).join(" / "),
        Math.max(0, lag.drained).toFixed(1),
        `${lag.batches.length}, ${lag.duplicates}, ${lag.missing}`,
        `${lag.last.pending}, ${JSON.stringify(lag.last.last_error)}`,
      ]),
    ),
  );
  console.log(report);
  lib.saveResults("part-five", { report, cost, lags });
}

lib.runMain(60, main);
