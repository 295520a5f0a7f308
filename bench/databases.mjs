#!/usr/bin/env node
// `npm run bench:databases`: write throughput with 1, 2 and 4 organization databases
// (src/db/databases.ts). One snapshot of the API whose wrangler.toml binds four (DB, DB_ORG_2..4),
// one seeded state migrated in all four, and three servers on copies of it that differ only in
// ORG_DATABASES: 1 (DB), 2 (DB, DB_ORG_2) or 4. On each, TENANTS organizations are placed over its
// databases in turn (the internal create names the database), each with its owner's key and a
// project; the load is PATCH of one variable in a tenant's default environment (one batch on its
// database's primary: the variable, its version and the audit entry), the tenants in turn, from
// CONNECTIONS connections. Rounds interleave the three servers (the order turned each round), so
// what the shared machine does weighs on all three alike; ratios are paired by round.
//
//   node bench/databases.mjs     env: ROUNDS (5) SECONDS (6) CONNECTIONS (16) TENANTS (8)
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import autocannon from "autocannon";
import * as lib from "./lib.mjs";

const { env, spread } = lib;
const [ROUNDS, SECONDS, CONNECTIONS, TENANTS] = [
  env("ROUNDS", 5),
  env("SECONDS", 6),
  env("CONNECTIONS", 16),
  env("TENANTS", 8),
];
const COUNTS = [1, 2, 4];
const BINDINGS = ["DB", "DB_ORG_2", "DB_ORG_3", "DB_ORG_4"];
const ADMIN = randomBytes(24).toString("hex");

/** The snapshot's wrangler.toml with DB_ORG_3 and DB_ORG_4 bound beside DB and DB_ORG_2. */
function fourDatabases(config) {
  const toml = fs.readFileSync(config, "utf8");
  const extra = [3, 4]
    .map(
      (n) =>
        `[[d1_databases]]\nbinding = "DB_ORG_${n}"\ndatabase_name = "deploy-platform-org-${n}"\n` +
        `database_id = "00000000-0000-4000-8000-00000000000${n}"\nmigrations_dir = "migrations"\n`,
    )
    .join("\n");
  const at = toml.indexOf('[[d1_databases]]\nbinding = "DB_ORG_2"');
  if (at < 0) throw new Error("wrangler.toml binds no DB_ORG_2");
  fs.writeFileSync(config, `${toml.slice(0, at)}${extra}\n${toml.slice(at)}`);
}

/** TENANTS organizations over `databases` in turn, each an owner's key and the project's environment. */
async function tenants(server, databases) {
  const made = [];
  for (let i = 0; i < TENANTS; i++) {
    const database = databases[i % databases.length];
    const admin = { admin: ADMIN };
    const org = await server.json("POST", "/internal/v1/orgs", {
      ...admin,
      body: { name: `t${i}`, database },
    });
    const account = await server.json("POST", "/internal/v1/accounts", { ...admin, body: { name: `o${i}` } });
    const body = { account_id: account.id, role: "owner" };
    await server.json("POST", `/internal/v1/orgs/${org.id}/members`, { ...admin, body });
    const keyBody = { account_id: account.id, created_by: account.id };
    const { key } = await server.json("POST", `/internal/v1/orgs/${org.id}/api-keys`, {
      ...admin,
      body: keyBody,
    });
    const project = await server.json("POST", "/v1/projects", { key, body: { name: `p${i}` } });
    made.push({ key, path: `/v1/environments/${project.default_environment_id}/variables`, database });
  }
  return made;
}

/** SECONDS of variable changes over the tenants: writes/s, the Worker's CPU ms per write, refusals. */
function slice(server, made) {
  let k = 0;
  const before = server.cpu();
  const setupRequest = (req) => {
    const t = made[k++ % made.length];
    const body = JSON.stringify({ variables: { [`V_${k % 50}`]: { type: "string", value: lib.hex(8) } } });
    const headers = { ...req.headers, accept: "application/json", "content-type": "application/json" };
    return { ...req, path: t.path, headers: { ...headers, "x-api-key": t.key }, body };
  };
  const options = {
    url: server.base,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [{ method: "PATCH", setupRequest }],
  };
  return new Promise((resolve, reject) => {
    let failed = 0;
    const instance = autocannon(options, (err, res) => {
      if (err) return reject(err);
      const ok = res.requests.total - failed;
      resolve({ rps: ok / res.duration, cpuMs: (1000 * (server.cpu() - before)) / Math.max(1, ok), failed });
    });
    instance.on("response", (_client, status) => {
      if (status !== 200) failed++;
    });
  });
}

async function main() {
  const config = lib.snapshot("api");
  fourDatabases(config);
  const { dir } = lib.seededState({ keyCount: 1, deploymentCount: 1, deep: false }, config, "databases");
  const servers = [];
  for (const n of COUNTS) {
    const vars = {
      ADMIN_TOKEN: ADMIN,
      RATE_LIMITS: lib.RATE_LIMITS,
      VARIABLES_KEY: randomBytes(32).toString("base64"),
      ORG_DATABASES: BINDINGS.slice(0, n).join(","),
    };
    const server = await new lib.Server(`${n}`, config, lib.copyState(dir, `databases-${n}`), vars).start();
    servers.push({ n, server, made: await tenants(server, BINDINGS.slice(0, n)), slices: [] });
  }
  for (const s of servers) await slice(s.server, s.made); // each server's JIT and first writes
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...servers.slice(round % 3), ...servers.slice(0, round % 3)];
    for (const s of order) s.slices.push(await slice(s.server, s.made));
    console.error(`bench: round ${round + 1}/${ROUNDS} done`);
  }
  const one = servers[0].slices;
  const rows = servers.map(({ n, slices }) => [
    n,
    spread(
      slices.map((x) => x.rps),
      0,
    ),
    lib
      .pairedRatio(
        slices.map((x) => x.rps),
        one.map((x) => x.rps),
      )
      .toFixed(2),
    spread(slices.map((x) => x.cpuMs)),
    slices.reduce((sum, x) => sum + x.failed, 0),
  ]);
  const command = "node bench/databases.mjs";
  const report = lib.report(
    lib.header(
      `${command} · ${ROUNDS} rounds × ${SECONDS} s · ${CONNECTIONS} connections · ${TENANTS} organizations`,
    ),
    lib.table(
      [
        "organization databases",
        "writes/s median (min–max)",
        "÷ 1 database, paired by round",
        "Worker CPU ms/write",
        "not 200",
      ],
      rows,
    ),
  );
  console.log(report);
  lib.saveResults("databases", { report, servers: servers.map(({ n, slices }) => ({ n, slices })) });
  for (const { server } of servers) await server.stop();
}

lib.runMain(20, main);
