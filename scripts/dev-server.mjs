// `npm run dev` started by a script on spare ports with its own local state (a copy of one migrated
// once, `migratedState`; check:dev's is empty, as a newcomer's is) and key file
// (DEV_KEY_FILE, so the developer's .dev.key is left alone): scripts/check-dev.mjs (and the walk
// of the README and the guides it runs, scripts/check-readme.mjs), scripts/check-cli.mjs,
// scripts/check-docs.mjs and scripts/check-action.mjs (on its own; check:cli runs its checks on its own server), and
// scripts/check-deploy.mjs (the staging build, `--env staging`).
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { sparePort } from "./lib/ports.mjs";
import { readEnvironment } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * How long a start may take. Alone, a fresh state's migrations and wrangler's start take about
 * 70 s on a 2-core machine; `npm test` starts two servers at once beside the static checks, where
 * 120 s was not always enough (check:dev failed at "Applying D1 migrations" twice in three runs).
 */
const START_MS = 300_000;

/** Resolves once `url` answers 2xx; rejects after `ms`. */
export async function waitFor(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer within ${ms / 1000} s`);
}

/** Resolves once `holds()` is true (checked every 100 ms), or after `ms` whatever it says. */
export async function until(holds, ms = 30_000) {
  const end = Date.now() + ms;
  while (!holds() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
}

/**
 * A local state that wrangler has migrated (`wrangler d1 migrations apply`, every database of
 * wrangler.toml, as `npm run dev` does on a fresh state), made once per set of migrations and
 * wrangler version under node_modules/.cache and copied for each server a check starts there.
 * A fresh state's migrations cost about 8 CPU-s (scripts/migrate.mjs: two wrangler starts, ~40
 * with wrangler applying each migration in a runtime of its own), which three checks of `npm test`
 * would each pay. The server's own `npm run dev` then finds nothing left to apply (in the
 * databases' files, without a wrangler start). check:dev starts from an empty state (`fresh`), as
 * a newcomer's first `npm run dev` does. One process makes it at a time (a lock directory holding
 * its pid, taken over when that process is gone); the others wait for it.
 */
export async function migratedState() {
  const migrations = join(root, "migrations");
  const hash = createHash("sha256");
  hash.update(
    JSON.parse(readFileSync(join(root, "node_modules", "wrangler", "package.json"), "utf8")).version,
  );
  hash.update(JSON.stringify(readEnvironment(undefined).d1_databases));
  for (const name of readdirSync(migrations)
    .filter((n) => n.endsWith(".sql"))
    .sort())
    hash.update(`\0${name}\0`).update(readFileSync(join(migrations, name)));
  const cache = join(root, "node_modules", ".cache", "deploy-platform-api", "dev-state");
  const made = join(cache, hash.digest("hex").slice(0, 16));
  const lock = `${made}.lock`;
  mkdirSync(cache, { recursive: true });
  const giveUp = Date.now() + START_MS;
  for (;;) {
    if (existsSync(join(made, "state"))) return join(made, "state");
    if (Date.now() > giveUp) throw new Error(`${lock} was held for ${START_MS / 1000} s`);
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "pid"), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      let holder = Number.NaN;
      try {
        holder = Number(readFileSync(join(lock, "pid"), "utf8"));
        process.kill(holder, 0);
      } catch (gone) {
        // The holder died (a killed `npm test`): the lock is taken over. A pid not written yet
        // (the holder between its mkdir and its write) is waited for, a minute at most.
        const unwritten =
          gone.code === "ENOENT" && Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > 60_000;
        if (gone.code === "ESRCH" || unwritten) {
          rmSync(`${made}.${holder}`, { recursive: true, force: true });
          rmSync(lock, { recursive: true, force: true });
        }
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const building = `${made}.${process.pid}`;
  try {
    rmSync(building, { recursive: true, force: true });
    // scripts/migrate.mjs, as `npm run dev` migrates: every database of wrangler.toml, in order.
    await promisify(execFile)(
      process.execPath,
      [join(root, "scripts", "migrate.mjs"), "--local", "--persist-to", join(building, "state")],
      { cwd: root },
    );
    renameSync(building, made);
    // The states of other migrations or another wrangler (an older checkout's) are of no more use,
    // nor is what a killed maker left half made (its wrangler may have outlived it).
    for (const other of readdirSync(cache))
      if (/^[0-9a-f]{16}(\.\d+)?$/.test(other) && join(cache, other) !== made)
        rmSync(join(cache, other), { recursive: true, force: true });
    return join(made, "state");
  } finally {
    rmSync(building, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Starts `npm run dev` (scripts/dev.mjs) with its state and key file under `dir` and waits for
 * it to answer. `log()` is everything it printed so far; `stop()` ends its process group.
 * With `defaultPort`, no `--port` is passed: wrangler chooses (8787 when free), and `base` is the
 * URL of the curl line dev.mjs prints, so a check reaches the server only if that line is right.
 * `args`: more of wrangler's (`--env staging`: the deployed build, scripts/check-deploy.mjs).
 * A `dir` without a state starts from a copy of `migratedState()`, unless `fresh`: then from none.
 */
export async function startDevServer(dir, { defaultPort = false, args: more = [], fresh = false } = {}) {
  const state = join(dir, "state");
  if (!fresh && !existsSync(state)) cpSync(await migratedState(), state, { recursive: true });
  const [port, inspectorPort] = [await sparePort(), await sparePort()];
  const keyFile = join(dir, "dev.key");
  const args = [
    ...(defaultPort ? [] : ["--port", String(port)]),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    state,
    ...more,
  ];
  const server = spawn(process.execPath, [join(root, "scripts", "dev.mjs"), ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, DEV_KEY_FILE: keyFile },
  });
  let output = "";
  server.stdout.on("data", (d) => (output += d));
  server.stderr.on("data", (d) => (output += d));
  const stop = () => {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {}
  };
  let exited = null;
  server.on("exit", (code, signal) => (exited = signal ?? code));
  // A start that cannot succeed (the process gone, a port taken) fails now, not after START_MS.
  let watching = true;
  const hopeless = (async () => {
    while (watching) {
      if (exited !== null) throw new Error(`npm run dev exited (${exited}) before it served`);
      if (/Address already in use/.test(output))
        throw new Error("wrangler could not listen: a port is taken");
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  let base = `http://localhost:${port}`;
  try {
    if (defaultPort) base = await Promise.race([printedBase(() => output, START_MS), hopeless]);
    await Promise.race([waitFor(`${base}/healthz`, START_MS), hopeless]);
  } catch (err) {
    stop();
    throw new Error(`${err.message}\n${output}`);
  } finally {
    watching = false;
  }
  return { base, keyFile, pid: server.pid, log: () => output, stop };
}

/** The base URL of the curl line dev.mjs prints once wrangler serves; rejects after `ms`. */
async function printedBase(log, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const printed = /curl -s (http:\/\/\S+)\/v1\/projects /.exec(log())?.[1];
    if (printed) return printed;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`npm run dev printed no curl line within ${ms / 1000} s`);
}

/**
 * Both cron jobs of wrangler.toml, run by hand at `path` of `base` (`/__scheduled` for `npm run
 * dev`, `/cdn-cgi/handler/scheduled` for a deployed environment's build): each answer, and whether
 * the daily job's log line reached the server's output `log()` (a little after its answer).
 */
export async function runCronsByHand(base, path, log) {
  const answers = [];
  for (const cron of ["*/5 * * * *", "0 3 * * *"]) {
    const res = await fetch(`${base}${path}?cron=${encodeURIComponent(cron)}`);
    answers.push({ cron, status: res.status, text: await res.text() });
  }
  const retention = /"msg":"audit log retention"/;
  for (let i = 0; i < 50 && !retention.test(log()); i++) await new Promise((r) => setTimeout(r, 100));
  return { answers, dailyRan: retention.test(log()) };
}
