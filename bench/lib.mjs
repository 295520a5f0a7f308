// What the bench scripts share: seeded local state, snapshots of the Workers, servers started with
// the inspector off (bench/start-worker.mjs) and their processes' CPU and memory from /proc, requests,
// statistics, tables, and a hard stop that cleans up. Linux only (/proc), 127.0.0.1 only.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { DOCS_ASSETS_DIR } from "../scripts/docs-assets.mjs";
import { seedSql } from "./seed.mjs";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const CHILD_ENV = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" };
export const env = (name, fallback) => Number(process.env[name] ?? fallback);
/** The API's RATE_LIMITS var for the bench: every policy lifted, so a pool of 20 keys carries a slice
 * (the limiter does the same work whatever the limit). */
const POLICIES = ["default", "reveal", "orgs-create", "keys-create", "anonymous", "oidc-exchange"];
const RATE_LIMITS = JSON.stringify(Object.fromEntries(POLICIES.map((p) => [p, 1e9])));
/** The vars each server runs with: the API's limits lifted (and `api`), the ladder's seeded organization. */
export const varsOf = (seed, api = {}) => ({
  // VARIABLES_KEY: the API signs every read's D1 bookmark with a key derived from it (§28); without
  // it each read logs an error, and that logging is work no deployed API does.
  api: { RATE_LIMITS, VARIABLES_KEY: randomBytes(32).toString("base64"), ...api },
  ladder: { ORG_ID: seed?.bench.org, ACCOUNT_ID: seed?.bench.owner },
});
export const hex = (bytes = 8) => randomBytes(bytes).toString("hex");
/** A new project of `server`, made as `key`, named `<prefix>-<12 hex digits>`. */
export const newProject = (server, key, prefix) =>
  server.json("POST", "/v1/projects", { key, body: { name: `${prefix}-${hex(6)}` } });
/** A request to `server`'s `/internal/v1${path}`, as its admin (its ADMIN_TOKEN var). */
export const internal = (server, method, path, body) =>
  server.json(method, `/internal/v1${path}`, { admin: server.vars.ADMIN_TOKEN, body });
export const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** `wrangler argv…` in `cwd`, to completion: its stdout. */
export const runWrangler = (argv, cwd = root) =>
  execFileSync(wrangler, argv, { cwd, encoding: "utf8", env: CHILD_ENV, stdio: ["ignore", "pipe", "pipe"] });

// One temp dir per run, removed with every server this process started when it exits, however.
export const tmp = fs.mkdtempSync(join(tmpdir(), "bench-"));
const children = new Set();
/** The child's process group: wrangler's workerd children too (spawned `detached`). */
const kill = (child, signal) => child.exitCode === null && orElse(() => process.kill(-child.pid, signal));
/** `f()`, or `fallback` when it throws (the process or file gone meanwhile). */
const orElse = (f, fallback) => {
  try {
    return f();
  } catch {
    return fallback;
  }
};
process.on("exit", () => {
  for (const child of children) kill(child, "SIGTERM");
  fs.rmSync(tmp, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));
/** Runs `main` and exits: 0 when done, 1 when it failed, 2 after `minutes`. */
export function runMain(minutes, main) {
  const stop = (code, message) => console.error(message) || process.exit(code);
  setTimeout(() => stop(2, "bench: hard timeout, stopping"), minutes * 60_000).unref();
  main().then(
    () => process.exit(0),
    (err) => stop(1, err),
  );
}

/**
 * Migrations applied to every database of `config` (default wrangler.toml: the directory and each
 * organization database) and, unless `options` is null, bench/seed.mjs loaded into the directory
 * `DB`, in a state dir of its own: `{ dir, seed }`.
 */
export function seededState(options = {}, config = join(root, "wrangler.toml"), name = "seeded") {
  const [dir, file, seed] = [join(tmp, name), join(tmp, `${name}.sql`), options && seedSql(options)];
  const d1 = (binding, ...argv) =>
    runWrangler(
      ["d1", ...argv, binding, "--local", "--persist-to", dir, "--config", config],
      dirname(config),
    );
  for (const binding of d1BindingsOf(config)) d1(binding, "migrations", "apply");
  if (!seed) return { dir };
  fs.writeFileSync(file, seed.sql);
  d1("DB", "execute", "--file", file, "--yes");
  return { dir, seed };
}

/** The D1 bindings a wrangler.toml declares, in order. */
const D1_BINDING = /^\[\[d1_databases\]\]\nbinding = "(\w+)"/gm;
const d1BindingsOf = (config) => [...fs.readFileSync(config, "utf8").matchAll(D1_BINDING)].map((m) => m[1]);
/** A copy of `state` for one server: every server writes its own files. */
export function copyState(state, name) {
  fs.cpSync(state, join(tmp, name), { recursive: true });
  return join(tmp, name);
}

/**
 * The wrangler.toml of a snapshot, in the temp dir, of the API (`src/`, wrangler.toml) or of a
 * bench Worker (`bench/<of>/`: `ladder`, `minimal`, `io`), named `name`: wrangler restarts a Worker whose
 * sources change, so a run must not serve the working tree. node_modules, scripts/ and dist/assets
 * (wrangler.toml's [build] and [assets]) are linked.
 * `countD1`: the API served through bench/count-d1.mjs, which counts its D1 queries.
 */
export function snapshot(name, { countD1 = false, of = name } = {}) {
  const dir = join(tmp, name);
  if (of === "api") {
    fs.cpSync(join(root, "src"), join(dir, "src"), { recursive: true });
    let toml = fs.readFileSync(join(root, "wrangler.toml"), "utf8");
    if (countD1) {
      // The entry re-exports the API with every Durable Object class given the counted env too.
      const classes = [...new Set([...toml.matchAll(/class_name = "(\w+)"/g)].map((m) => m[1]))];
      const subclass = (c) =>
        `export class ${c} extends api.${c} { constructor(ctx, env) { super(ctx, counted(env)); } }`;
      const lines = [
        'import * as api from "./src/index.ts";',
        'import { counted, withCount } from "./count-d1.mjs";',
      ];
      lines.push(...classes.map(subclass), "export default withCount(api.default);");
      fs.writeFileSync(join(dir, "entry.mjs"), `${lines.join("\n")}\n`);
      fs.cpSync(join(root, "bench", "count-d1.mjs"), join(dir, "count-d1.mjs"));
      toml = toml.replace(/^main = .*$/m, 'main = "entry.mjs"');
    }
    fs.writeFileSync(join(dir, "wrangler.toml"), toml);
  } else {
    fs.cpSync(join(root, "bench", of), dir, { recursive: true });
    // What the floors share, which they import from `..` (and which resolves its packages there).
    for (const file of ["floor.ts", "floor-io.ts"]) fs.cpSync(join(root, "bench", file), join(tmp, file));
    if (!fs.existsSync(join(tmp, "node_modules")))
      fs.symlinkSync(join(root, "node_modules"), join(tmp, "node_modules"));
  }
  // A floor built as the API is resolves `zod` as the API does (its wrangler.toml [alias]).
  if (of !== "api" && /^\[alias\]$/m.test(fs.readFileSync(join(dir, "wrangler.toml"), "utf8")))
    fs.cpSync(join(root, "src", "lib", "zod"), join(dir, "src", "lib", "zod"), { recursive: true });
  // wrangler.toml's [build] step, run here once (not by each server the run starts).
  execFileSync(process.execPath, [join(root, "scripts", "docs-assets.mjs")]);
  for (const link of ["node_modules", "scripts", "migrations"])
    fs.symlinkSync(join(root, link), join(dir, link));
  fs.mkdirSync(join(dir, "dist"));
  fs.symlinkSync(DOCS_ASSETS_DIR, join(dir, "dist", "assets"));
  return join(dir, "wrangler.toml");
}

/**
 * The API snapshot in `dir` built as it deploys (wrangler.toml `[env.*]`: scripts/build.mjs) into
 * `dir/dist/worker`, its top-level configuration (no environment's bindings) pointed at that build.
 */
export async function splitBuild(dir) {
  const { buildWorker } = await import("../scripts/build.mjs");
  await buildWorker(join(dir, "dist", "worker"), dir);
  const config = join(dir, "wrangler.toml");
  const toml = fs.readFileSync(config, "utf8");
  const deployed = /^\[env\.production\]\n(?:[^[\n][^\n]*\n|\n)*/m.exec(toml)[0];
  const keys = ["no_bundle", "find_additional_modules", "rules", "minify"].map((key) => {
    const line = new RegExp(`^${key} = .*$`, "m").exec(deployed)?.[0];
    if (!line) throw new Error(`wrangler.toml [env.production] has no ${key}`);
    return line;
  });
  const main = ['main = "dist/worker/index.js"', 'base_dir = "dist/worker"', ...keys].join("\n");
  fs.writeFileSync(config, toml.replace(/^main = .*$/m, main).replace(/^minify = true\n/m, ""));
  return config;
}

/**
 * The API of this tree and of each commit of `bases` (a git worktree each: this tree's node_modules
 * when its package-lock.json is this tree's, else its own `npm ci`; its own bench/lib.mjs makes its
 * snapshot, with its own src/, wrangler.toml and migrations): `run({ this, [commit]: wrangler.toml })`,
 * then the worktrees removed. Each built as it deploys (scripts/build.mjs), or with `countD1` as
 * wrangler bundles it, its D1 statements counted (bench/count-d1.mjs). For the scripts that pair builds.
 */
export async function withBaseBuilds(bases, run, { countD1 = false } = {}) {
  if (!bases.length) throw new Error("BASE=<commit>: the build to pair this tree with");
  const [configs, dirs] = [{ this: snapshot("api", { countD1 }) }, []];
  try {
    for (const base of bases) {
      const dir = addWorktree(base, `base-${dirs.length}`);
      dirs.push(dir);
      const baseLib = await import(join(dir, "bench", "lib.mjs"));
      configs[base] = baseLib.snapshot("api", { countD1 });
      if (countD1) continue;
      // A commit before bench/lib.mjs had splitBuild kept it in bench/split-build.mjs.
      const split = baseLib.splitBuild ?? (await import(join(dir, "bench", "split-build.mjs"))).splitBuild;
      await split(dirname(configs[base]));
    }
    if (!countD1) await splitBuild(dirname(configs.this));
    return await run(configs);
  } finally {
    for (const dir of dirs) removeWorktree(dir);
  }
}

/**
 * A git worktree of `commit` under the bench's temp dir, named `name`, ready to run: this tree's
 * node_modules when its package-lock.json is this tree's, else its own `npm ci`. `removeWorktree`
 * once done.
 */
export function addWorktree(commit, name) {
  const dir = join(tmp, name);
  execFileSync("git", ["worktree", "add", "--detach", dir, commit], { cwd: root, stdio: "ignore" });
  if (spawnSync("git", ["diff", "--quiet", commit, "--", "package-lock.json"], { cwd: root }).status === 0)
    fs.symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  else execFileSync("npm", ["ci"], { cwd: dir, stdio: "ignore" });
  return dir;
}
export const removeWorktree = (dir) =>
  execFileSync("git", ["worktree", "remove", "--force", dir], { cwd: root });

/** A server of the API's snapshot `config` (this tree's by default), its own state migrated, not seeded. */
export async function apiServer(vars = {}, config = snapshot("api"), name = "api") {
  const { dir } = seededState(null, config, `${name}-state`);
  return new Server(name, config, dir, { ...varsOf().api, ADMIN_TOKEN: hex(24), ...vars }).start();
}
/**
 * A new organization of `server` in `database` through the internal API: `{ id, key, server, project,
 * env }`, its owner's key and a project's environment; with `lift`, its variables limit raised (§29).
 */
export async function newOrg(server, name, database = "DB", lift = true) {
  const admin = (method, path, body) => internal(server, method, path, body);
  const org = await admin("POST", "/orgs", { name, database });
  const account = await admin("POST", "/accounts", { name: `${name}-owner` });
  await admin("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "owner" });
  const keyBody = { account_id: account.id, created_by: account.id };
  const { key } = await admin("POST", `/orgs/${org.id}/api-keys`, keyBody);
  if (lift) await admin("PUT", `/orgs/${org.id}/limits`, { variables: 1_000_000 });
  const project = await newProject(server, key, "p");
  return { id: org.id, key, server, project: project.id, env: project.default_environment_id };
}
/** A variable create in `org`'s environment (one string, a new name each), as sideBySide takes a request. */
export const variableCreate = (org) => ({
  method: "POST",
  path: `/v1/environments/${org.env}/variables`,
  key: org.key,
  server: org.server,
  body: () => ({ name: `C_${hex(6)}`, type: "string", value: hex(8) }),
});
/** About `rows` more rows in `org`: PATCHes of 500 new string variables, `perScope` per environment. */
export async function fill(org, rows, perScope = 10) {
  let env = org.env;
  for (let i = 0; i < Math.round(rows / 1002); i++) {
    if (i > 0 && i % perScope === 0)
      env = (await newProject(org.server, org.key, "p")).default_environment_id;
    const names = Array.from({ length: 500 }, (_, j) => [`F${i}_${j}`, { type: "string", value: hex(8) }]);
    const body = { variables: Object.fromEntries(names) };
    await org.server.json("PATCH", `/v1/environments/${env}/variables`, { key: org.key, body });
  }
}

/**
 * One Worker served by wrangler's `unstable_startWorker` with the inspector off, on a free port, as
 * its own process group; `pids.worker` is the workerd process that runs the Worker (with its Durable
 * Objects and its local D1), the other workerd the dev proxy in front of it (it listens on `port`).
 */
export class Server {
  /**
   * `runtime`: `{ env, name }`, the environment wrangler starts workerd with (MINIFLARE_WORKERD_PATH
   * naming a wrapper, bench/first-instructions.mjs) and the name its processes then run under.
   */
  constructor(name, config, state, vars = {}, runtime = undefined) {
    Object.assign(this, { name, config, state, vars, runtime });
  }
  async start() {
    const script = join(root, "bench", "start-worker.mjs");
    const argv = [script, this.config, this.state, JSON.stringify(this.vars)];
    const env = this.runtime ? { ...process.env, ...this.runtime.env } : process.env;
    const options = { cwd: root, detached: true, env, stdio: ["ignore", "pipe", "inherit"] };
    this.child = spawn(process.execPath, argv, options);
    children.add(this.child);
    let out = "";
    this.child.stdout.on("data", (d) => (out += d));
    for (let i = 0; !/ready (\S+)\//.test(out); i++) {
      if (this.child.exitCode !== null || i > 6000) throw new Error(`${this.name} did not start`);
      await sleep(100);
    }
    this.base = /ready (\S+)\//.exec(out)[1];
    this.inspector = /inspector (\S+)/.exec(out)?.[1];
    this.port = Number(new URL(this.base).port);
    // `ready` comes from the dev proxy; the Worker's own workerd starts after it: found once it
    // listens, then left until quiet, so that a request meets a started Worker.
    for (let i = 0; !this.pids; i++) {
      const group = workerds(this.child.pid, this.runtime?.name);
      const ports = group.map((pid) => listeningPorts(pid));
      const worker = group.filter((_, j) => ports[j].length && !ports[j].includes(this.port));
      if (worker.length > 1 || i > 6000) throw new Error(`${this.name}: no one Worker process (${worker})`);
      if (worker.length === 1) {
        this.pids = { worker: worker[0] };
        // The Worker's own socket, behind the dev proxy: for a client whose buffering matters.
        this.direct = `http://127.0.0.1:${ports[group.indexOf(worker[0])][0]}`;
      } else await sleep(100);
    }
    await this.quiet();
    return this;
  }
  /** Until the Worker's process is quiet (under 5 ms of CPU in 0.5 s), for 20 s at most. */
  async quiet() {
    for (let i = 0, before = this.cpu(); i < 40; i++, before = this.cpu()) {
      await sleep(500);
      if (this.cpu() - before < 0.005) return;
    }
  }
  async stop() {
    this.pids = undefined;
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    kill(this.child, "SIGTERM");
    if ((await Promise.race([exited, sleep(10_000).then(() => "late")])) === "late") {
      kill(this.child, "SIGKILL");
      await exited;
    }
  }
  /** CPU seconds (user + system) of the Worker's process so far; its resident memory in MB. */
  cpu = () => cpuSeconds(this.pids.worker);
  cpuNs = () => cpuNs(this.pids.worker);
  rssMb = () => rssMb(this.pids.worker);
  request = (method, path, options) => request(this.base, method, path, options);
  json = async (method, path, options) => (await request(this.base, method, path, options)).body;
}

/** /proc/<pid>/stat: the command name, then the fields after it ([0] state, [1] ppid, [2] pgrp…). */
const stat = (pid) => {
  const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const end = text.lastIndexOf(")");
  return [text.slice(text.indexOf("(") + 1, end), ...text.slice(end + 2).split(" ")];
};
/** The workerd processes of process group `pgrp` (named `process`: workerd unless wrapped). */
const workerds = (pgrp, process = "workerd") =>
  fs.readdirSync("/proc").filter((pid) => {
    const [name, , , group] = /^\d+$/.test(pid) ? orElse(() => stat(pid), []) : [];
    return name === process && Number(group) === pgrp;
  });
/** The TCP ports `pid` listens on (its socket inodes matched against /proc/net/tcp{,6}). */
export function listeningPorts(pid) {
  const ports = new Map();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of fs.readFileSync(file, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === "0A") ports.set(f[9], Number.parseInt(f[1].split(":").at(-1), 16));
    }
  }
  return fs.readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    const link = orElse(() => fs.readlinkSync(`/proc/${pid}/fd/${fd}`), "");
    return ports.get(/^socket:\[(\d+)\]$/.exec(link)?.[1]) ?? [];
  });
}
/** utime + stime in seconds (10 ms ticks: for slices of thousands of requests). */
const cpuSeconds = (pid) => {
  const [utime, stime] = stat(pid).slice(12, 14);
  return (Number(utime) + Number(stime)) / 100;
};
/** Nanoseconds on a CPU of every thread of `pid` (/proc/<pid>/task/<tid>/schedstat): for one request. */
const cpuNs = (pid) =>
  fs.readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => {
    const schedstat = orElse(() => fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8"), "0");
    return sum + Number(schedstat.split(" ")[0]);
  }, 0);
const rssMb = (pid) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** One request; `key` as x-api-key, `admin` as the ADMIN_TOKEN bearer, `headers` beside them; an answer of 300 or more throws unless `allowRefusal`. `{ status, body, ms }` (a body JSON unless its type says otherwise). */
export async function request(base, method, path, { key, admin, body, headers: extra, allowRefusal } = {}) {
  const headers = { accept: "application/json", ...extra };
  if (key) headers["x-api-key"] = key;
  if (admin) headers.authorization = `Bearer ${admin}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const start = performance.now();
  const signal = AbortSignal.timeout(60_000);
  const res = await fetch(`${base}${path}`, { method, headers, body: body && JSON.stringify(body), signal });
  const text = await res.text();
  const ms = performance.now() - start;
  if (res.status >= 300 && !allowRefusal)
    throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
  const json = /json/.test(res.headers.get("content-type") ?? "application/json");
  return { status: res.status, body: text ? (json ? JSON.parse(text) : text) : null, ms };
}

export const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * (xs.length - 1))];
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
/** `median (min–max)` of `xs`, with `d` decimals. */
export const spread = (xs, d = 2) =>
  `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;
/** The median of xs[i] ÷ ys[i]: two figures of one round, minutes apart at most, paired. */
export const pairedRatio = (xs, ys) => median(xs.map((x, i) => x / ys[i]));

/**
 * `samples` rounds of `requests` ({ label: { method?, path, body?, key?, server? } }, as `key` unless
 * one has its own, `null` for none; a `body` function is called for each request; on `c.server`
 * unless one names its own), one at a time, in turn (the order reversed every other round): each
 * one's p50 ms and median Worker CPU ms (schedstat of its server's Worker process, from the request
 * to its answer), and each later one's ÷ the first one's, paired by round.
 */
export async function sideBySide(c, samples, requests, key) {
  const labels = Object.keys(requests);
  const [ms, cpu] = [0, 1].map(() => Object.fromEntries(labels.map((l) => [l, []])));
  for (let i = 0; i < samples; i++) {
    for (const label of i % 2 ? [...labels].reverse() : labels) {
      const {
        method = "GET",
        path,
        body: made,
        key: own = key,
        headers,
        server = c.server,
      } = requests[label];
      const body = typeof made === "function" ? made() : made;
      const before = server.cpuNs();
      ms[label].push((await server.request(method, path, { key: own, body, headers })).ms);
      cpu[label].push((server.cpuNs() - before) / 1e6);
    }
  }
  const [figures, [a, ...others]] = [{}, labels];
  for (const l of labels) [figures[`${l} p50 ms`], figures[`${l} CPU ms`]] = [median(ms[l]), median(cpu[l])];
  for (const b of others) {
    figures[`${b} ÷ ${a}: ms`] = pairedRatio(ms[b], ms[a]);
    figures[`${b} ÷ ${a}: CPU`] = pairedRatio(cpu[b], cpu[a]);
  }
  return figures;
}

/** `statements / round trips` of D1 of one request of sideBySide's form (and 0.5 s after), on a `countD1` server. */
export async function statementsOf({ method = "GET", path, key, body, server }) {
  const before = await server.json("GET", "/__bench/d1");
  await server.request(method, path, { key, body: typeof body === "function" ? body() : body });
  await sleep(500);
  const after = await server.json("GET", "/__bench/d1");
  return `${after.statements - before.statements} / ${after.roundTrips - before.roundTrips}`;
}

/**
 * `seconds` of autocannon on `server` at `connections` of `request` ({ method, setupRequest }): answers,
 * req/s, each latency and status, errors, and the Worker process's CPU ms per answer.
 */
export function load(server, seconds, connections, request) {
  const [latencies, statuses, before] = [[], {}, server.cpu()];
  const options = { url: server.base, connections, duration: seconds, requests: [request] };
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (err, res) => {
      if (err) return reject(err);
      const n = res.requests.total;
      const cpuMs = (1000 * (server.cpu() - before)) / Math.max(1, n);
      resolve({ n, rps: n / res.duration, cpuMs, latencies, statuses, errors: res.errors + res.timeouts });
    });
    instance.on("response", (_client, status, _bytes, ms) => {
      latencies.push(ms);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

/** A markdown table, `head` its cells (or one string of them, " | " between); "" when it has no rows. */
export function table(head, rows) {
  const cells = typeof head === "string" ? head.split(" | ") : head;
  return rows.length
    ? [cells, cells.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n")
    : "";
}
/** A report's parts, the empty ones left out, a blank line between. */
export const report = (...parts) => parts.filter(Boolean).join("\n\n");
/** The first lines of every report: when, which machine, how loaded, which command. */
export function header(command) {
  const load = loadavg().map((l) => l.toFixed(2));
  return `${new Date().toISOString()} · ${cpus().length}× ${cpus()[0]?.model} · node ${process.version} · load ${load.join(" ")}\n${command}`;
}
/** Raw figures in bench/results/ (git-ignored). */
export function saveResults(name, data) {
  const stamp = new Date().toISOString().replaceAll(":", "-");
  const file = join(root, "bench", "results", `${name}-${stamp}.json`);
  fs.mkdirSync(dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(data, null, 2));
}
