#!/usr/bin/env node
/**
 * Moves an organization to another database through the internal API (API_CONTRACT §32) and
 * follows it until it finishes, one line per change of its state or progress:
 *
 *   npm run move -- <org_id> <database>        start a move (DB or DB_ORG_2 locally) and follow it
 *   npm run move -- --follow <move_id>         follow a move already started
 *   npm run move -- --cancel <move_id>         cancel a move that is still copying
 *
 * Against `npm run dev` by default (http://localhost:8787, ADMIN_TOKEN from .dev.vars); elsewhere
 * set API_URL and ADMIN_TOKEN. Exits 0 once the move reads `completed` (or, for --cancel,
 * `cancelled`), 1 otherwise.
 */
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { follow: { type: "string" }, cancel: { type: "string" }, help: { type: "boolean", short: "h" } },
});
const usage = "usage: npm run move -- <org_id> <database> | --follow <move_id> | --cancel <move_id>";
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const base = (process.env.API_URL ?? "http://localhost:8787").replace(/\/$/, "");
const token = process.env.ADMIN_TOKEN ?? devVar("ADMIN_TOKEN");
if (!token) fail("no ADMIN_TOKEN: set it, or run `npm run dev` once to create .dev.vars");

function devVar(name) {
  if (!existsSync(".dev.vars")) return undefined;
  const line = readFileSync(".dev.vars", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}=`));
  return line?.slice(name.length + 1).trim();
}

function fail(message) {
  console.error(message);
  process.exit(1);
}

async function call(method, path, body) {
  const res = await fetch(`${base}/internal/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err) =>
    fail(`${base} did not answer (${err.cause?.code ?? err.message}): is \`npm run dev\` running?`),
  );
  const text = await res.text();
  const json = text ? JSON.parse(text) : {};
  if (!res.ok) {
    const causes = (json.cause ?? []).map((c) => `\n  ${c.path}: ${c.message}`).join("");
    fail(`${method} ${path} → ${res.status} ${json.code ?? ""}: ${json.message ?? text}${causes}`);
  }
  return json;
}

const line = (move) =>
  `${new Date().toISOString().slice(11, 23)}  ${move.state.padEnd(9)}  ${String(move.rows_copied).padStart(7)} rows copied${move.error ? `  error: ${move.error}` : ""}`;

async function follow(id) {
  let last = "";
  for (;;) {
    const move = await call("GET", `/moves/${id}`);
    const now = line(move);
    if (now.slice(14) !== last) console.log(now);
    last = now.slice(14);
    if (["completed", "cancelled", "failed"].includes(move.state)) return move;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

if (values.cancel) {
  const move = await call("POST", `/moves/${values.cancel}/cancel`);
  console.log(line(move));
  process.exit(move.state === "cancelled" ? 0 : 1);
}
let id = values.follow;
if (!id) {
  const [orgId, to] = positionals;
  if (!orgId || !to) fail(usage);
  const org = await call("GET", `/orgs/${orgId}`);
  const move = await call("POST", `/orgs/${orgId}/moves`, { to });
  console.log(`moving ${org.name} (${orgId}) from ${move.from} to ${move.to}: move ${move.id}`);
  id = move.id;
}
const done = await follow(id);
process.exit(done.state === "completed" ? 0 : 1);
