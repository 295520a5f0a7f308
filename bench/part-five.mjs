#!/usr/bin/env node
// Part five's costs (issues #74, #80), the API's D1 statements counted (bench/count-d1.mjs), the
// parts named by PARTS in this order. Each pair: ROUNDS rounds of SAMPLES requests of each, in turn
// (lib.sideBySide: Worker CPU per request, ÷ the first's, paired within a round), and the D1
// statements / round trips of one of each (lib.statementsOf).
//
// - `base` (with BASE=<commit>[,<commit>…]): a variable create (`POST /v1/environments/{id}/variables`,
//   one string) in a new organization of this tree's API beside the same create of each BASE's build
//   (lib.withBaseBuilds), each a server of its own on a state migrated by its own migrations. §29's
//   limit check and §30's audit sequence landed together (5b8de1a): 0db9df6 is the build before both.
// - `limits` (§29): `GET /v1/orgs/{org_id}/limits` beside `GET /v1/projects/{id}`, one SELECT.
// - `create` (§29): the create in an environment of an organization holding VARIABLES variables
//   (PATCHes of 500 names, all in that environment) beside it in an empty organization.
// - `streams` (§30): for each of RATES, a new organization with an enabled audit stream to a
//   receiver on 127.0.0.1 writes that many audited changes a second (variable creates, sent on a
//   fixed schedule whatever the answers, to the Worker's own socket, not the dev proxy) for SECONDS: the stream's largest `pending` (read every
//   250 ms) and the delay from each entry's `created_at` to its receipt, until every entry is in.
//   The lower rate first: a rate the local Worker cannot answer leaves a backlog.
//
//   node bench/part-five.mjs  env: PARTS (limits,create,streams; base first with BASE) BASE ROUNDS (5)
//                                  SAMPLES (40) VARIABLES (20000) RATES (20,50) SECONDS (20)
import { createServer } from "node:http";
import * as lib from "./lib.mjs";

const [ROUNDS, SAMPLES] = [lib.env("ROUNDS", 5), lib.env("SAMPLES", 40)];
const [VARIABLES, SECONDS] = [lib.env("VARIABLES", 20_000), lib.env("SECONDS", 20)];
const RATES = (process.env.RATES ?? "20,50").split(",").map(Number);
const BASES = process.env.BASE?.split(",") ?? [];
const PARTS = (process.env.PARTS ?? `${BASES.length ? "base," : ""}limits,create,streams`).split(",");
const VARS = { ALLOW_INSECURE_WEBHOOKS: "true" }; // every server's (lib.apiServer's besides)

/**
 * ROUNDS rounds of `requests` side by side, each on new processes of their servers (as run.mjs: no
 * figure rests on one process's luck) after 5 of each to warm, then one of each's statements.
 */
async function rounds(requests) {
  const [servers, figures] = [new Set(Object.values(requests).map((r) => r.server)), []];
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round ? servers : []) await s.stop().then(() => s.start());
    await lib.sideBySide({}, 5, requests);
    figures.push(await lib.sideBySide({}, SAMPLES, requests));
  }
  const statements = [];
  for (const r of Object.values(requests)) statements.push(await lib.statementsOf(r));
  return { labels: Object.keys(requests), rounds: figures, statements };
}

/** The create on this tree's server beside each BASE's (the first BASE's is the divisor). */
async function beside(server, configs) {
  const requests = {};
  for (const [i, base] of BASES.entries()) {
    const s = await lib.apiServer(VARS, configs[base], `base${i}`);
    requests[`BASE ${base}`] = lib.variableCreate(await lib.newOrg(s, "beside", "DB", false));
  }
  requests["this tree"] = lib.variableCreate(await lib.newOrg(server, "beside", "DB", false));
  const result = await rounds(requests);
  for (const r of Object.values(requests)) if (r.server !== server) await r.server.stop();
  return result;
}

async function limits(server) {
  const org = await lib.newOrg(server, "limits");
  const read = (path) => ({ path, key: org.key, server });
  return rounds({
    "GET /v1/projects/{id}": read(`/v1/projects/${org.project}`),
    "GET /v1/orgs/{org_id}/limits": read(`/v1/orgs/${org.id}/limits`),
  });
}

async function createCost(server) {
  const [empty, full] = [await lib.newOrg(server, "empty"), await lib.newOrg(server, "full")];
  // Every name in the create's own environment (fill's `perScope`): the organization's and the scope's size.
  await lib.fill(full, (VARIABLES / 500) * 1002, Number.POSITIVE_INFINITY);
  return rounds({ empty: lib.variableCreate(empty), [`${VARIABLES} variables`]: lib.variableCreate(full) });
}

async function streamLag(server, rate) {
  const org = await lib.newOrg(server, `streamed-${rate}`);
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
  const body = { name: "bench", url: `http://127.0.0.1:${receiver.address().port}/audit` };
  const stream = await server.json("POST", `/v1/orgs/${org.id}/audit-streams`, { key: org.key, body });
  const read = () => server.json("GET", `/v1/audit-streams/${stream.id}`, { key: org.key });
  let [polling, pendings] = [true, []];
  const poller = (async () => {
    while (polling) {
      const { pending } = await read();
      pendings.push([Math.round(performance.now()), pending]);
      await lib.sleep(250);
    }
  })();
  const { method, path, key, body: made } = lib.variableCreate(org);
  const statuses = {};
  const start = performance.now();
  const sent = [];
  for (let i = 0; i < rate * SECONDS; i++) {
    await lib.sleep(start + (i * 1000) / rate - performance.now());
    const answer = lib.request(server.direct, method, path, { key, body: made(), allowRefusal: true });
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
  const missing = last.delivered_through - Math.min(...received.keys()) + 1 - received.size;
  const drained = (batches.at(-1)[0] - start) / 1000 - writing;
  const row = [
    rate,
    `${statuses[201] ?? 0} (${JSON.stringify(statuses)})`,
    ((statuses[201] ?? 0) / writing).toFixed(1),
    Math.max(...pendings.map(([, pending]) => pending)),
    [50, 99, 100].map((p) => lib.percentile(delays, p)).join(" / "),
    Math.max(0, drained).toFixed(1),
    `${batches.length}, ${duplicates}, ${missing}`,
    `${last.pending}, ${JSON.stringify(last.last_error)}`,
  ];
  return { row, statuses, writing, delays, batches, last, pendings, start };
}
const LAG_HEAD =
  "§30 stream, entries offered per s | written (answers) | answered per s | largest pending | " +
  "created_at → receipt ms p50 / p99 / max | last receipt after the last answer s | " +
  "batches, again, missing | pending, last_error at the end";

/** A table of `rounds`' result: each request's CPU, p50 ms and statements, then each ratio. */
function pairedTable(title, { labels, rounds, statements }) {
  const figure = (name) => lib.spread(rounds.map((r) => r[name]));
  const rows = labels.map((l, i) => [l, figure(`${l} CPU ms`), figure(`${l} p50 ms`), statements[i]]);
  const a = labels[0];
  for (const l of labels.slice(1))
    rows.push([`${l} ÷ ${a}, paired`, `**${figure(`${l} ÷ ${a}: CPU`)}**`, figure(`${l} ÷ ${a}: ms`), ""]);
  const head = ["Worker CPU ms, median of rounds (min–max)", "p50 ms", "D1 statements / round trips"];
  return lib.table([title, ...head], rows);
}

async function main() {
  const results = { lags: [] };
  const run = async (configs) => {
    const server = await lib.apiServer(VARS, configs.this);
    if (PARTS.includes("base")) results.base = await beside(server, configs);
    if (PARTS.includes("limits")) results.limits = await limits(server);
    if (PARTS.includes("create")) results.create = await createCost(server);
    for (const rate of PARTS.includes("streams") ? RATES : []) {
      await server.quiet();
      results.lags.push(await streamLag(server, rate));
    }
    await server.stop();
  };
  if (PARTS.includes("base")) await lib.withBaseBuilds(BASES, run, { countD1: true });
  else await run({ this: lib.snapshot("api", { countD1: true }) });
  const set = ["PARTS", "BASE", "ROUNDS", "SAMPLES", "VARIABLES", "RATES", "SECONDS"].filter(
    (n) => process.env[n],
  );
  const command = [...set.map((n) => `${n}=${process.env[n]}`), "node bench/part-five.mjs"].join(" ");
  const report = lib.report(
    lib.header(command),
    results.base && pairedTable("a variable create", results.base),
    results.limits && pairedTable("§29 a read", results.limits),
    results.create && pairedTable("§29 a variable create", results.create),
    lib.table(
      LAG_HEAD,
      results.lags.map((lag) => lag.row),
    ),
  );
  console.log(report);
  lib.saveResults("part-five", { report, ...results });
}

lib.runMain(60, main);
