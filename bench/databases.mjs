#!/usr/bin/env node
// `npm run bench:databases`: write throughput with 1, 2 and 4 organization databases
// (src/db/databases.ts). One snapshot of the API whose wrangler.toml binds four (DB, DB_ORG_2..4),
// and three servers of it (lib.apiServer, each state migrated in all four) that differ only in
// ORG_DATABASES: 1 (DB), 2 (DB, DB_ORG_2) or 4. On each, TENANTS organizations are placed over its
// databases in turn (the internal create names the database), each with its owner's key and a
// project; the load is PATCH of one variable in a tenant's default environment (one batch on its
// database's primary: the variable, its version and the audit entry), the tenants in turn, from
// CONNECTIONS connections. Rounds interleave the three servers (the order turned each round), so
// what the shared machine does weighs on all three alike; ratios are paired by round.
//
//   node bench/databases.mjs     env: ROUNDS (5) SECONDS (6) CONNECTIONS (16) TENANTS (8)
import * as fs from "node:fs";
import * as lib from "./lib.mjs";

const { env, spread } = lib;
const [ROUNDS, SECONDS, CONNECTIONS] = [env("ROUNDS", 5), env("SECONDS", 6), env("CONNECTIONS", 16)];
const TENANTS = env("TENANTS", 8);
const BINDINGS = ["DB", "DB_ORG_2", "DB_ORG_3", "DB_ORG_4"];

/** The snapshot's wrangler.toml with DB_ORG_3 and DB_ORG_4 bound beside DB and DB_ORG_2. */
function fourDatabases(config) {
  const toml = fs.readFileSync(config, "utf8");
  const bind = (n) =>
    `[[d1_databases]]\nbinding = "DB_ORG_${n}"\ndatabase_name = "deploy-platform-org-${n}"\n` +
    `database_id = "00000000-0000-4000-8000-00000000000${n}"\nmigrations_dir = "migrations"\n`;
  const at = toml.indexOf('[[d1_databases]]\nbinding = "DB_ORG_2"');
  if (at < 0) throw new Error("wrangler.toml binds no DB_ORG_2");
  fs.writeFileSync(config, `${toml.slice(0, at)}${bind(3)}\n${bind(4)}\n${toml.slice(at)}`);
}

/** SECONDS of variable changes over the tenants (lib.load): writes/s, Worker CPU ms per write, not 200. */
async function slice(server, tenants) {
  let k = 0;
  const setupRequest = (req) => {
    const t = tenants[k++ % tenants.length];
    const body = JSON.stringify({ variables: { [`V_${k % 50}`]: { type: "string", value: lib.hex(8) } } });
    const headers = { ...req.headers, accept: "application/json", "content-type": "application/json" };
    return {
      ...req,
      path: `/v1/environments/${t.env}/variables`,
      headers: { ...headers, "x-api-key": t.key },
      body,
    };
  };
  const x = await lib.load(server, SECONDS, CONNECTIONS, { method: "PATCH", setupRequest });
  return { rps: x.rps, cpuMs: x.cpuMs, failed: x.n - (x.statuses[200] ?? 0) };
}

async function main() {
  const config = lib.snapshot("api");
  fourDatabases(config);
  const servers = [];
  for (const n of [1, 2, 4]) {
    const vars = { ORG_DATABASES: BINDINGS.slice(0, n).join(",") };
    const server = await lib.apiServer(vars, config, `databases-${n}`);
    const tenants = [];
    for (let i = 0; i < TENANTS; i++) tenants.push(await lib.newOrg(server, `t${i}`, BINDINGS[i % n], false));
    servers.push({ n, server, tenants, slices: [] });
  }
  for (const s of servers) await slice(s.server, s.tenants); // each server's JIT and first writes
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of [...servers.slice(round % 3), ...servers.slice(0, round % 3)])
      s.slices.push(await slice(s.server, s.tenants));
    console.error(`bench: round ${round + 1}/${ROUNDS} done`);
  }
  const of = (slices, k) => slices.map((x) => x[k]);
  const rows = servers.map(({ n, slices }) => [
    n,
    spread(of(slices, "rps"), 0),
    lib.pairedRatio(of(slices, "rps"), of(servers[0].slices, "rps")).toFixed(2),
    spread(of(slices, "cpuMs")),
    slices.reduce((sum, x) => sum + x.failed, 0),
  ]);
  const head =
    "organization databases | writes/s median (min–max) | ÷ 1 database, paired by round | Worker CPU ms/write | not 200";
  const run = `${ROUNDS} rounds × ${SECONDS} s · ${CONNECTIONS} connections · ${TENANTS} organizations`;
  const report = lib.report(lib.header(`node bench/databases.mjs · ${run}`), lib.table(head, rows));
  console.log(report);
  lib.saveResults("databases", { report, servers: servers.map(({ n, slices }) => ({ n, slices })) });
  for (const { server } of servers) await server.stop();
}

lib.runMain(20, main);
