#!/usr/bin/env node
// `npm run dev`: local set-up, then `wrangler dev` (API_CONTRACT §1).
//  1. .dev.vars from .dev.vars.example when missing (working local secrets on a fresh clone);
//  2. pending D1 migrations applied to every local database (the directory and each organization
//     database: wrangler.toml's d1_databases);
//  3. on an empty database, a demo organization, owner account, API key and project, with the
//     key printed; on one whose .dev.key does not open it (written for other state), a new key
//     for the first organization's owner;
//  4. `wrangler dev --test-scheduled` with every extra argument passed through;
//  5. once wrangler serves, a ready curl line (and the cron, document and reference URLs) at the
//     address wrangler reports: when 8787 is taken it moves to another port by itself (and under
//     CI, or with `--port 0`, to any free one), so a URL guessed from the arguments could reach
//     another server. wrangler's own bin relays its dev server's `DEV_SERVER_READY` message
//     (`{ip, port}`) to a parent that gave it an IPC channel, which is the port it bound; a line
//     of its output could change wording and would take wrangler's terminal away from it.
//  6. wrangler.toml's cron jobs run on their schedule, as deployed, and the sweep once at the start
//     (scripts/lib/cron-clock.mjs; DEV_CRONS=off leaves them to be run by hand).
// DEV_KEY_FILE names another file for the key (the checks that start their own server on
// their own state use it, so they leave the developer's .dev.key alone).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCronClock } from "./lib/cron-clock.mjs";
import {
  d1Bindings,
  envOf,
  migrate,
  noLocalDatabases,
  nothingToApply,
  readLocalDatabase,
  wranglerSync,
} from "./migrate.mjs";
import { newApiKey, newId, sqlText } from "./seed-sql.mjs";
import { readEnvironment, wrangler } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);
const args = process.argv.slice(2);
const KEY_FILE = process.env.DEV_KEY_FILE || ".dev.key";

// Wrangler options that choose where local state lives must reach the set-up commands too.
const stateArgs = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--persist-to" || a === "--env" || a === "-e" || a === "--config" || a === "-c") {
    stateArgs.push(a, args[i + 1]);
    i++;
  } else if (/^--(persist-to|env|config)=/.test(a)) stateArgs.push(a);
}

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("Created .dev.vars from .dev.vars.example (local secrets).");
}

// Every local database: the directory and each organization database (scripts/migrate.mjs).
const bindings = d1Bindings(envOf(stateArgs));
/** A deployed environment's build (scripts/build.mjs), which wrangler serves as it is. */
const noBundle = readEnvironment(envOf(stateArgs)).no_bundle === true;
console.log(`Applying D1 migrations to the local databases (${bindings.join(", ")})…`);
// On a state with no database yet (a newcomer's first run), the demo rows go into the directory
// database's batch of migrations (scripts/migrate.mjs), a wrangler start fewer than seeding after.
const fresh = noLocalDatabases(["--local", ...stateArgs]);
const freshDemo = fresh ? demoRows() : undefined;
// One database after another: two wranglers at once on one state directory can meet on a file
// both open (workerd: "database is locked: SQLITE_BUSY").
try {
  // A later start on migrated state: read from the databases themselves, without a wrangler start
  // for each (scripts/migrate.mjs `nothingToApply`; any doubt, and wrangler's apply runs).
  const upToDate = !fresh && nothingToApply(["--local", ...stateArgs]);
  if (upToDate) console.log("Every local database records every migration: nothing to apply.");
  for (const binding of upToDate ? [] : bindings) {
    const after = binding === "DB" ? freshDemo?.statements : undefined;
    const out = migrate(binding, ["--local", ...stateArgs], fresh, after);
    const [first] = out.split("\n");
    if (first.includes("in one batch")) console.log(`${binding}: ${first}`);
  }
} catch (err) {
  console.error(err.stdout ?? "", err.stderr ?? err.message);
  process.exit(1);
}

let key = existsSync(KEY_FILE) ? readFileSync(KEY_FILE, "utf8").trim() : undefined;

/**
 * Where the local directory database stands, in one query: how many organizations it holds,
 * whether `key` opens it (a live key of an organization here: a .dev.key written for other state,
 * another `--persist-to` or a wiped .wrangler, does not, and is replaced, so the key printed always
 * works), and the first organization's owner (the demo organization, on state this script
 * seeded), for whom a replacement is made.
 */
function localState(key) {
  const hash = key ? createHash("sha256").update(key).digest("hex") : "";
  const now = new Date().toISOString();
  // The first organization's owner: the same row in both (ties broken by every column ordered).
  const owner = (column) =>
    `(SELECT ${column} FROM organizations o JOIN org_members m ON m.org_id = o.id AND m.role = 'owner' ORDER BY o.created_at, o.id, m.account_id LIMIT 1)`;
  const sql = `SELECT (SELECT count(*) FROM organizations) AS organizations,
    (SELECT count(*) FROM api_key_index i JOIN api_keys k ON k.id = i.key_id WHERE i.key_hash = ${sqlText(hash)} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${sqlText(now)})) AS opens,
    ${owner("o.id")} AS org, ${owner("m.account_id")} AS account`;
  // Read from the database's file (scripts/migrate.mjs), else through wrangler (a start, ~2.5 s).
  const [row] = readLocalDatabase("DB", ["--local", ...stateArgs], sql) ?? [];
  return (
    row ??
    JSON.parse(wranglerSync(["d1", "execute", "DB", "--local", "--json", ...stateArgs, "--command", sql]))[0]
      .results[0]
  );
}
const state = localState(freshDemo?.key ?? key);

/**
 * The demo key's rows: the key in the organization's database and its index in the directory's
 * (src/db/databases.ts), both DB here: the demo organization lives in DB itself.
 */
function demoKeyInserts({ keyId, org, account, hash, now }) {
  return [
    `INSERT INTO api_keys (id, org_id, account_id, created_by, name, key_hash, created_at) VALUES (${sqlText(keyId)}, ${sqlText(org)}, ${sqlText(account)}, ${sqlText(account)}, 'local demo key', ${sqlText(hash)}, ${sqlText(now)})`,
    `INSERT INTO api_key_index (key_hash, key_id, org_id, created_at) VALUES (${sqlText(hash)}, ${sqlText(keyId)}, ${sqlText(org)}, ${sqlText(now)})`,
  ];
}

/**
 * The demo rows of an empty state: an organization, its owner, a project with its environment,
 * and an API key for the owner (`key`, printed; its hash in the rows).
 */
function demoRows() {
  const now = new Date().toISOString();
  const org = newId();
  const account = newId();
  const keyId = newId();
  const project = newId();
  const env = newId();
  const demo = newApiKey();
  const hash = demo.hash;
  const profile = JSON.stringify({ bio: null, github: null, location: null, twitter: null, website: null });
  const statements = [
    `INSERT INTO organizations (id, name, created_at) VALUES (${sqlText(org)}, 'Demo Org', ${sqlText(now)})`,
    `INSERT INTO accounts (id, name, display_name, avatar, profile, created_at) VALUES (${sqlText(account)}, 'demo-owner', 'Demo Owner', NULL, ${sqlText(profile)}, ${sqlText(now)})`,
    `INSERT INTO org_members (org_id, account_id, role, created_at) VALUES (${sqlText(org)}, ${sqlText(account)}, 'owner', ${sqlText(now)})`,
    ...demoKeyInserts({ keyId, org, account, hash, now }),
    `INSERT INTO projects (id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at) VALUES (${sqlText(project)}, ${sqlText(org)}, 'demo', 'demo', 'A demo project', 'emoji:🚀', NULL, ${sqlText(env)}, 'connected', ${sqlText(now)}, ${sqlText(now)})`,
    `INSERT INTO environments (id, project_id, name, name_key, created_at, updated_at) VALUES (${sqlText(env)}, ${sqlText(project)}, 'production', 'production', ${sqlText(now)}, ${sqlText(now)})`,
    `INSERT INTO project_members (id, project_id, account_id, role, created_at) VALUES (${sqlText(newId())}, ${sqlText(project)}, ${sqlText(account)}, 'owner', ${sqlText(now)})`,
  ];
  return { key: demo.key, statements };
}

let seeded = false;
/** The demo key made: kept in KEY_FILE and printed. */
function announceDemo(demo) {
  writeFileSync(KEY_FILE, `${demo.key}\n`, { mode: 0o600 });
  key = demo.key;
  seeded = true;
  console.log(`
Seeded a demo organization, its owner, a project and an API key (also saved in ${KEY_FILE}):

  API key: ${key}
`);
}
if (freshDemo && state.opens > 0) announceDemo(freshDemo);
else if (state.organizations === 0) {
  const demo = demoRows();
  wranglerSync(["d1", "execute", "DB", "--local", ...stateArgs, "--command", demo.statements.join(";\n")]);
  announceDemo(demo);
}
if (!seeded && (!key || state.opens === 0)) {
  const owner = state.org ? { org: state.org, account: state.account } : undefined;
  if (owner) {
    const renewed = newApiKey();
    const keyId = newId();
    const now = new Date().toISOString();
    wranglerSync([
      "d1",
      "execute",
      "DB",
      "--local",
      ...stateArgs,
      "--command",
      demoKeyInserts({ keyId, org: owner.org, account: owner.account, hash: renewed.hash, now }).join(";\n"),
    ]);
    writeFileSync(KEY_FILE, `${renewed.key}\n`, { mode: 0o600 });
    console.log(`
${key ? `The key in ${KEY_FILE} does not open this local state` : `No ${KEY_FILE}`}: a new demo API key for the first organization's owner (saved in ${KEY_FILE}):

  API key: ${renewed.key}
`);
    key = renewed.key;
  } else {
    console.log(`
The key in ${KEY_FILE} does not open this local state, and no organization here has an owner to
make a new one for: create an organization and a key through the internal API (docs/api.md).
`);
    key = undefined;
  }
}

/** What to paste once wrangler serves on `base`. */
function readyBanner(base) {
  const lines = [""];
  if (key) {
    lines.push(
      `The API is on ${base}; with the local demo API key (in ${KEY_FILE}):`,
      "",
      `  curl -s ${base}/v1/projects -H 'x-api-key: ${key}' -H 'accept: application/json'`,
      "",
    );
  } else lines.push(`The API is on ${base}.`);
  lines.push(`OpenAPI document: ${base}/openapi.json   API reference: ${base}/docs`);
  lines.push(
    cronsRun
      ? `Cron jobs run as deployed: the sweep (${SWEEP}) at the start and every 5 minutes, the daily retention (${DAILY}) at 03:00 UTC (DEV_CRONS=off: by hand only).`
      : "Cron jobs run only by hand (DEV_CRONS=off).",
    `By hand: curl '${base}${SCHEDULED_PATH}?cron=*/5+*+*+*+*' (sweep), '${base}${SCHEDULED_PATH}?cron=0+3+*+*+*' (daily retention)`,
    "",
  );
  return lines.join("\n");
}

// The cron jobs (wrangler.toml [triggers]), run by the clock below and by hand: `--test-scheduled`
// serves `/__scheduled` from inside the Worker. (Wrangler's own `/cdn-cgi/handler/scheduled`
// answered `500 exception` with [assets] before wrangler 4.164, workers-sdk #9882; it works now,
// and `/__scheduled` stays as docs/development.md says.) A dev-only flag: `wrangler deploy` bundles
// nothing of it. A deployed environment's build (`--env staging`) is not bundled by wrangler, which
// then has nowhere to put `/__scheduled`: wrangler's own path serves its crons.
const SCHEDULED_PATH = noBundle ? "/cdn-cgi/handler/scheduled" : "/__scheduled";
/** wrangler.toml [triggers]: the sweep of stuck work and the daily retention. */
const SWEEP = "*/5 * * * *";
const DAILY = "0 3 * * *";
const crons = readEnvironment(envOf(stateArgs)).triggers?.crons ?? [];
const cronsRun = process.env.DEV_CRONS !== "off" && crons.length > 0;
/** Where the server answers now (wrangler reports it again after a reload). */
let serving;

/** Asks the server to run `cron` as the scheduler would; throws unless it answers 2xx. */
async function runCron(cron) {
  const res = await fetch(`${serving}${SCHEDULED_PATH}?cron=${encodeURIComponent(cron)}`);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
  return res.status;
}

function startCrons() {
  const warn = (message) => console.warn(`npm run dev: ${message}`);
  // At the start, the sweep: what a crash of the last run left undone (a queue message lost with
  // the local queue's memory) is picked up now rather than at the next 5-minute mark.
  const atStart = crons.includes(SWEEP) ? [SWEEP] : [];
  startCronClock({ crons, run: runCron, warn });
  for (const cron of atStart)
    runCron(cron).then(
      (status) => console.log(`The sweep (cron "${cron}") ran at the start: ${status}`),
      (err) => warn(`the cron job "${cron}" did not run at the start: ${err.message}`),
    );
}

/** A host wrangler listens on, as a browser or curl reaches it (wrangler's own formatHostname). */
function reachable(ip) {
  if (ip === "0.0.0.0" || ip === "::" || ip === "*") return "localhost";
  return ip.includes(":") ? `[${ip}]` : ip;
}

const devArgs = args.includes("--test-scheduled") ? args : ["--test-scheduled", ...args];
const child = spawn(wrangler, ["dev", ...devArgs], { stdio: ["inherit", "inherit", "inherit", "ipc"] });
child.on("message", (message) => {
  let ready;
  try {
    ready = JSON.parse(String(message));
  } catch {
    return;
  }
  if (ready?.event === "DEV_SERVER_READY" && Number.isInteger(ready.port)) {
    const first = serving === undefined;
    serving = `http://${reachable(String(ready.ip))}:${ready.port}`;
    console.log(readyBanner(serving));
    if (first && cronsRun) startCrons();
  }
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
