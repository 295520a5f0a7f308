#!/usr/bin/env node
// `npm run check:dev` (part of `npm test`): what only `npm run dev` shows, checked on the real
// thing. It starts `npm run dev` (scripts/dev.mjs) with its own fresh local state and key file,
// and without `--port` while another server holds 8787 (wrangler's default, which it then leaves
// for another port), then checks that:
//   0. the curl line it prints names the port wrangler moved to, not 8787 (every check below
//      goes to that printed URL);
//   1. the fresh databases were migrated, each in one batch with no wrangler apply after it, the
//      directory's with the demo rows, and the printed key calls the API (wrangler's own apply
//      finds nothing left on that state, asked once the server is gone, before 7);
//   2. the cron jobs run on wrangler.toml's schedule (scripts/lib/cron-clock.mjs), the sweep at the
//      start, and by hand (`/__scheduled`, see scripts/dev.mjs);
//   3. a streamed body over 1 MiB is refused, and the next request on the server still succeeds
//      (a body cancelled mid-upload used to leave wrangler's proxy answering 503);
//   4. the examples of README.md and of every guide in docs/ run as written, in order, on this
//      server (scripts/check-readme.mjs);
//   5. the MCP server at /mcp (docs/clients.md, "MCP server") answers the printed key's tool call in the
//      Worker as wrangler builds it, which the tests' module runner does not build;
//   6. a live stream whose client goes away gives its place among its key's 10 back within 20 s
//      (API_CONTRACT §33), through wrangler's proxy, where the stream learns of it only by writing;
//   7. started again on that state with a key file written for other state, it prints a new key
//      that works, and starts no wrangler for the migrations, which the databases' files show
//      applied (and which a copy with one unrecorded, or a database missing, would not skip);
//   8. an audited write answered just before the SIGKILL that ends the first server reaches its
//      audit stream once the second starts: the local queue lost its wake-up, the sweep at the
//      start makes it up.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { walkDocs, walkSteps } from "./check-readme.mjs";
import { runCronsByHand, startDevServer, until } from "./dev-server.mjs";
import { checker } from "./lib/check.mjs";
import { nextRun } from "./lib/cron-clock.mjs";
import { d1Bindings, localDatabaseFile, migrationsOf, nothingToApply, wranglerSync } from "./migrate.mjs";
import { readEnvironment } from "./wrangler-envs.mjs";

const dir = mkdtempSync(join(tmpdir(), "check-dev-"));

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s`;
const { check, fail, done } = checker("check:dev", { prefix: elapsed });

/**
 * Holds port 8787 on the loopback addresses with a server that is not the API, unless something
 * else holds it already (a developer's own `npm run dev`): either way, wrangler must move.
 */
async function holdDefaultPort() {
  const decoys = [];
  for (const host of ["127.0.0.1", "::1"]) {
    const decoy = createServer((_req, res) => res.writeHead(418).end("not the API"));
    const listening = await new Promise((resolve) => {
      decoy.once("error", () => resolve(false));
      decoy.listen(8787, host, () => resolve(true));
    });
    if (listening) decoys.push(decoy);
  }
  return () => {
    for (const decoy of decoys) decoy.close();
  };
}

/**
 * Check 6: ten live streams of one key are open, an eleventh is `429`; one client goes away, and
 * an eleventh is admitted within 20 s.
 */
async function checkStreamPlaces(base, key, environmentId) {
  const adminToken = readFileSync(join(process.cwd(), ".dev.vars"), "utf8")
    .match(/^ADMIN_TOKEN=(.*)$/m)?.[1]
    ?.trim();
  const internal = (path, body) =>
    fetch(`${base}/internal/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((res) => res.json());
  const stack = await internal(`/environments/${environmentId}/stacks`, { name: `places-${Date.now()}` });
  const deployment = await internal(`/environments/${environmentId}/deployments`, {
    stack_ids: [stack.id],
    data: { patch: [] },
  });
  const open = async () => {
    const aborter = new AbortController();
    const res = await fetch(`${base}/v1/deployments/${deployment.id}/timeline`, {
      headers: { "x-api-key": key, accept: "text/event-stream" },
      signal: aborter.signal,
    });
    if (res.status === 200) await res.body.getReader().read();
    else await res.text();
    return { status: res.status, aborter };
  };
  const streams = [];
  try {
    for (let i = 0; i < 10; i++) streams.push(await open());
    const eleventh = await open();
    check(
      streams.every((s) => s.status === 200) && eleventh.status === 429,
      "ten live streams of one key open, and an eleventh is 429",
      `${streams.map((s) => s.status)} then ${eleventh.status}`,
    );
    streams[0].aborter.abort();
    const gone = Date.now();
    let admitted;
    while (Date.now() - gone < 30_000) {
      admitted = await open();
      if (admitted.status === 200) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const seconds = (Date.now() - gone) / 1000;
    if (admitted) streams.push(admitted);
    check(
      admitted?.status === 200 && seconds <= 20,
      `a stream whose client went away gives its place back within 20 s (§33): ${seconds} s`,
      `${admitted?.status} after ${seconds} s`,
    );
  } finally {
    for (const s of streams) s.aborter.abort();
  }
}

/**
 * Check 8's first half: an audit stream (§30) to a receiver here, an audited write, and the server
 * killed (SIGKILL, its whole process group) as soon as its answer is read. The request wakes the
 * stream after its commit (`waitUntil`), which the kill may cut or not; the receiver refuses what
 * arrives until the kill, so the entry is owed either way: by the stream's retry, or by the sweep at
 * the start when the kill cut the wake-up. Answers the receiver, the entries it has received and the
 * written project's id, for the second half after the restart.
 */
async function killAfterAuditedWrite(server, key, orgId) {
  const lines = [];
  // Until the kill, once the stream's first batch arrived, every batch is refused (503): the write's
  // entry cannot be acknowledged before the kill, whether its wake-up ran or the kill cut it.
  const refusing = { on: false };
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (refusing.on) {
        res.statusCode = 503;
        res.end();
        return;
      }
      lines.push(
        ...body
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      );
      res.end();
    });
  });
  await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const created = await fetch(`${server.base}/v1/orgs/${orgId}/audit-streams`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: "after a crash", url: `http://127.0.0.1:${receiver.address().port}/` }),
  });
  if (created.status !== 201)
    throw new Error(`the audit stream's create: ${created.status} ${await created.text()}`);
  await until(() => lines.length > 0, 10_000);
  refusing.on = true;
  const written = await fetch(`${server.base}/v1/projects`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: `before-a-crash-${Date.now()}` }),
  });
  // The whole answer read first (a kill while its body is in flight ends the read), then the kill.
  const project = await written.json();
  process.kill(-server.pid, "SIGKILL");
  const before = lines.length;
  // Still refusing: a batch of the killed server's that was on its way is not taken for the
  // restart's. The caller stops refusing once that server's port is closed.
  return { receiver, refusing, lines, before, projectId: project.id, status: written.status };
}

/**
 * Check 3's upload: a JSON body of `size` bytes sent in 64 KiB chunks without a length (chunked),
 * resolved with the answer. The server may answer before the upload ends and close its side then;
 * the answer still counts, and writing stops. (`fetch` fails such a request as a whole, "other side
 * closed", though it had read the answer: seen once under a loaded `npm test`.) No answer at all
 * is an error.
 */
function streamedPost(url, headers, size) {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(url, { method: "POST", headers }, (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      // The upload ends with the answer (its socket is not reused).
      const settle = () => {
        req.destroy();
        resolve({ status: res.statusCode, text });
      };
      res.on("end", settle);
      res.on("error", settle);
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const chunk = Buffer.from(" ".repeat(64 * 1024));
    let sent = 0;
    const write = () => {
      if (sent === 0) req.write('{"name":"big"}');
      while (!answered && !req.destroyed && sent <= size) {
        sent += chunk.byteLength;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      if (!answered && !req.destroyed) req.end();
    };
    write();
  });
}

/** What scripts/dev.mjs prints when every local database's file records every migration. */
const UP_TO_DATE = "Every local database records every migration: nothing to apply.";

/**
 * Check 7's ground: `nothingToApply` (scripts/migrate.mjs), which lets a later start skip
 * wrangler's apply, holds for the state the first server migrated, and not for a copy of it with
 * one database's last migration unrecorded, nor for one with a database missing.
 */
function checkUpToDate(state) {
  const local = (at) => ["--local", "--persist-to", at];
  const [binding, other] = d1Bindings();
  const last = migrationsOf(readEnvironment(undefined).d1_databases[1]).names.at(-1);
  const short = join(dir, "short");
  const missing = join(dir, "missing");
  cpSync(state, short, { recursive: true });
  cpSync(state, missing, { recursive: true });
  const db = new DatabaseSync(localDatabaseFile(other, local(short)));
  db.prepare("DELETE FROM d1_migrations WHERE name = ?").run(last);
  db.close();
  rmSync(localDatabaseFile(binding, local(missing)));
  const answers = [
    nothingToApply(local(state)),
    nothingToApply(local(short)),
    nothingToApply(local(missing)),
  ];
  check(
    answers.join() === "true,false,false",
    `a later start skips wrangler's apply only when every database's file records every migration (${last} unrecorded in ${other}, or ${binding} missing: wrangler applies)`,
    `migrated, short, missing: ${answers}`,
  );
  rmSync(short, { recursive: true, force: true });
  rmSync(missing, { recursive: true, force: true });
}

let server;
let log = "";
const release = await holdDefaultPort();
// The walk's commands, split while the server starts (a fork of bash for each line of the pages:
// seconds of a loaded machine that need no server).
const prepared = walkSteps();
prepared.catch(() => {});
try {
  server = await startDevServer(dir, { defaultPort: true, fresh: true });
  const { base, keyFile } = server;
  check(
    new URL(base).port !== "8787",
    `with 8787 taken, the printed curl line names the port wrangler serves on (${base})`,
    base,
  );

  // scripts/migrate.mjs: every migration in one batch on a state with no database, the demo rows
  // in the directory database's, and no wrangler apply after it, once the file records them all
  // (wrangler's own apply is asked below, on this state, once the server is gone).
  const bindings = d1Bindings();
  const migrations = readdirSync("migrations").filter((name) => name.endsWith(".sql")).length;
  const batched = bindings.filter((b) => {
    const more = b === "DB" ? " and 8 more statements" : "";
    return server
      .log()
      .includes(`${b}: ${migrations} migrations applied to a new local database in one batch${more} (`);
  });
  const unapplied = bindings.every((b) =>
    new RegExp(`${b}: .* in one batch.*; its file records them all: no wrangler apply\\.`).test(server.log()),
  );
  check(
    batched.length === bindings.length && unapplied,
    `a state with no database gets every migration in one batch, the demo rows with the directory's, and no wrangler apply (${bindings.join(", ")})`,
    `batched: ${batched.join(", ") || "none"}; no apply: ${unapplied}`,
  );

  const key = readFileSync(keyFile, "utf8").trim();
  check(
    key.startsWith("dpk_") && server.log().includes(key),
    "the demo key is printed",
    `${key || "no key"} not in the output`,
  );
  const listed = await fetch(`${base}/v1/projects`, { headers: { "x-api-key": key } });
  const page = await listed.json();
  check(
    listed.status === 200 && page.data?.length === 1 && page.data[0].name === "demo",
    "the seeded key lists the seeded project",
    `${listed.status} ${JSON.stringify(page)}`,
  );

  // scripts/lib/cron-clock.mjs: wrangler.toml's crons on their schedule, and the sweep at the start.
  const triggers = readEnvironment(undefined).triggers.crons;
  const at = (iso) => Date.parse(iso);
  const runs = [
    nextRun(triggers, at("2026-11-27T12:01:00Z")),
    nextRun(triggers, at("2026-11-27T12:04:59.999Z")),
    nextRun(triggers, at("2026-11-27T02:57:30Z")),
  ].map(({ at, due }) => `${new Date(at).toISOString()} ${due.join(" + ")}`);
  check(
    runs.join("; ") ===
      "2026-11-27T12:05:00.000Z */5 * * * *; 2026-11-27T12:05:00.000Z */5 * * * *; 2026-11-27T03:00:00.000Z */5 * * * * + 0 3 * * *",
    `npm run dev runs wrangler.toml's crons (${triggers.join(", ")}) on their schedule, as deployed`,
    runs.join("; "),
  );
  await until(() => server.log().includes("ran at the start"));
  check(
    server.log().includes('The sweep (cron "*/5 * * * *") ran at the start: 200'),
    "npm run dev runs the sweep once as it starts",
    "no such line in its output",
  );

  const crons = await runCronsByHand(base, "/__scheduled", server.log);
  for (const { cron, status, text } of crons.answers)
    check(status === 200, `the cron job "${cron}" runs by hand`, `${status} ${text}`);
  check(crons.dailyRan, "the daily job reached the Worker", "no retention log line");

  const mcp = (id, method, params) =>
    fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    }).then(async (res) => ({ status: res.status, body: await res.json() }));
  const hello = await mcp(1, "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "check-dev", version: "1" },
  });
  const called = await mcp(2, "tools/call", { name: "list_projects", arguments: {} });
  check(
    hello.body.result?.serverInfo?.name === "deploy-platform-api" &&
      called.body.result?.structuredContent?.data?.[0]?.name === "demo",
    "the MCP server at /mcp lists the seeded project with the printed key",
    `${hello.status} ${JSON.stringify(hello.body)}; ${called.status} ${JSON.stringify(called.body)}`,
  );

  const headers = { "x-api-key": key, "content-type": "application/json" };
  const over = await streamedPost(`${base}/v1/projects`, headers, 1024 * 1024 + 256 * 1024);
  check(over.status === 400, "a streamed body over 1 MiB is 400", `${over.status} ${over.text}`);
  const next = await fetch(`${base}/v1/projects`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: `after-${Date.now()}` }),
  });
  check(next.status === 201, "the next request after it succeeds", `${next.status} ${await next.text()}`);

  // Side by side: the stream check mostly waits (10 s for the server to see a client gone), under
  // the printed key, whose family no page's key is in, in the demo organization, which the walk
  // moves (docs/operating.md) only after about a minute of pages before it.
  await Promise.all([
    walkDocs({ base, keyFile, check, prepared }),
    checkStreamPlaces(base, key, page.data[0].default_environment_id),
  ]);

  // Killed after an audited write, then started again on the same state with a .dev.key written
  // for other state: a new key is made and printed, and it opens this state (the printed key must
  // always work); the stream sends the write's entry it owes (its retry, or the sweep at the start).
  const crash = await killAfterAuditedWrite(server, key, page.data[0].org_id);
  // Until the first server is gone (its port closed), so the two never share the state; the kill
  // is asserted (a server still up would deliver the entry by its own retry, crash or not).
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    gone = await fetch(`${base}/healthz`).then(
      () => false,
      () => true,
    );
    if (!gone) await new Promise((r) => setTimeout(r, 100));
  }
  check(gone, "the first server is gone after its SIGKILL (its port closed)", `${base} still answers`);
  // What reaches the receiver from now on is the restarted server's.
  crash.refusing.on = false;
  checkUpToDate(join(dir, "state"));
  // What the fresh start's batches recorded, as wrangler reads it: its own apply finds nothing left.
  for (const binding of bindings) {
    const persist = ["--local", "--persist-to", join(dir, "state")];
    const out = wranglerSync(["d1", "migrations", "apply", binding, ...persist]);
    check(
      out.includes("No migrations to apply"),
      `wrangler's own apply finds nothing left in ${binding}, which the fresh start's batch migrated`,
      out,
    );
  }
  writeFileSync(keyFile, "dpk_written-for-other-state\n");
  server = await startDevServer(dir, { fresh: true });
  const renewed = readFileSync(server.keyFile, "utf8").trim();
  const again = await fetch(`${server.base}/v1/projects`, { headers: { "x-api-key": renewed } });
  check(
    renewed !== "dpk_written-for-other-state" &&
      !server.log().includes("in one batch") &&
      server.log().includes(UP_TO_DATE) &&
      !server.log().includes("No migrations to apply") &&
      server.log().includes("does not open this local state") &&
      server.log().includes(renewed) &&
      again.status === 200,
    "on the same state again (no wrangler for the migrations: the files record them all), a .dev.key that does not open it is replaced by a printed key that does",
    `${again.status} ${renewed}`,
  );
  const isWrite = (entry) => entry.target?.id === crash.projectId;
  await until(() => crash.lines.some(isWrite));
  crash.receiver.close();
  check(
    crash.status === 201 && crash.before === 1 && crash.lines.some(isWrite),
    "an audited write answered just before a SIGKILL reaches its audit stream after the restart (the stream's retry, or the sweep at the start when the kill cut its wake-up)",
    `write ${crash.status}; entries before the kill ${crash.before}, after the restart ${JSON.stringify(crash.lines.map((e) => [e.sequence, e.action]))}`,
  );
} catch (err) {
  fail(err);
} finally {
  log = server?.log() ?? log;
  server?.stop();
  release();
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
}

done("npm run dev works as README.md and the guides say.", ` The server's output:\n${log}`);
