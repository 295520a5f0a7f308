// What every bench script shares: wrangler as a child process, free local ports, a hard stop
// (timeout or signal) that cleans up, and the percentiles and medians of the tables.
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";

/** The environment of every wrangler child: no prompts, no metrics. */
export const CHILD_ENV = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" };

/** Runs `wrangler argv…` in `cwd` to completion and returns its stdout. */
export function wranglerRunner(wrangler, cwd) {
  return (argv) =>
    execFileSync(wrangler, argv, {
      cwd,
      encoding: "utf8",
      env: CHILD_ENV,
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
    });
}

export function portFree(port) {
  return new Promise((resolve) => {
    const server = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** The first `count` free ports of `from`–`to` on 127.0.0.1. */
export async function freePorts(from, to, count) {
  const free = [];
  for (let port = from; port <= to && free.length < count; port++) if (await portFree(port)) free.push(port);
  if (free.length < count) throw new Error(`no ${count} free ports in ${from}–${to}`);
  return free;
}

/**
 * Runs `cleanUp` and exits when the script outlives `ms` (exit 2) or is interrupted (exit 130);
 * returns the timer, for `clearTimeout` once the script has finished by itself.
 */
export function stopOnTimeoutOrSignal(name, ms, cleanUp) {
  const guard = setTimeout(() => {
    console.error(`${name}: hard timeout, stopping`);
    cleanUp();
    process.exit(2);
  }, ms);
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.on(signal, () => {
      cleanUp();
      process.exit(130);
    });
  }
  return guard;
}

/** The `p`th percentile of ascending `sorted` (NaN when empty). */
export const percentile = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : Number.NaN;

export const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
