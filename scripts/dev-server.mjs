// `npm run dev` started by a script on spare ports with its own fresh local state and key file
// (DEV_KEY_FILE, so the developer's .dev.key is left alone): scripts/check-dev.mjs (and the walk
// of the README and the guides it runs, scripts/check-readme.mjs), scripts/check-cli.mjs,
// scripts/check-docs.mjs and scripts/check-action.mjs (on its own; check:cli runs its checks on its own server), and
// scripts/check-deploy.mjs (the staging build, `--env staging`).
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sparePort } from "./lib/ports.mjs";

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

/**
 * Starts `npm run dev` (scripts/dev.mjs) with its state and key file under `dir` and waits for
 * it to answer. `log()` is everything it printed so far; `stop()` ends its process group.
 * With `defaultPort`, no `--port` is passed: wrangler chooses (8787 when free), and `base` is the
 * URL of the curl line dev.mjs prints, so a check reaches the server only if that line is right.
 * `args`: more of wrangler's (`--env staging`: the deployed build, scripts/check-deploy.mjs).
 */
export async function startDevServer(dir, { defaultPort = false, args: more = [] } = {}) {
  const [port, inspectorPort] = [await sparePort(), await sparePort()];
  const keyFile = join(dir, "dev.key");
  const args = [
    ...(defaultPort ? [] : ["--port", String(port)]),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    join(dir, "state"),
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
  return { base, keyFile, log: () => output, stop };
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
