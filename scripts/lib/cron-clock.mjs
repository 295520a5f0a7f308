// `npm run dev` runs wrangler.toml's cron jobs ([triggers] crons) on their schedule, as Cloudflare
// runs them deployed, and the sweep once as the server starts (scripts/dev.mjs). `wrangler dev`
// runs none by itself (only `/__scheduled` by hand), so without this a local server never ran the
// backstops a deployed one runs every 5 minutes: after a crash of `npm run dev` (its queue keeps
// messages in memory), an audit stream's lost wake-up, an unpublished event or a lost wait timer
// waited for a request that happened to touch them (docs/capacity.md, "What a crash can and cannot
// lose"). Pure: scripts/check-dev.mjs checks the schedule without waiting for it.

/** One field of a cron expression as the set of values it matches: `*`, `*\/n`, `n`, `a,b,…`. */
function field(text, min, max) {
  const values = new Set();
  for (const part of text.split(",")) {
    const step = /^\*\/([1-9][0-9]*)$/.exec(part);
    if (part === "*" || step) {
      for (let v = min; v <= max; v += step ? Number(step[1]) : 1) values.add(v);
    } else if (/^[0-9]+$/.test(part) && Number(part) >= min && Number(part) <= max) {
      values.add(Number(part));
    } else {
      throw new Error(`cron-clock: "${text}" is not a field npm run dev can run (*, */n, n, a,b)`);
    }
  }
  return values;
}

/** A matcher of `cron` (five fields, UTC, as Cloudflare reads them) for a Date at a whole minute. */
export function cronMatcher(cron) {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) throw new Error(`cron-clock: "${cron}" does not have five fields`);
  const [minute, hour, day, month, weekday] = [
    field(fields[0], 0, 59),
    field(fields[1], 0, 23),
    field(fields[2], 1, 31),
    field(fields[3], 1, 12),
    field(fields[4], 0, 6),
  ];
  return (at) =>
    minute.has(at.getUTCMinutes()) &&
    hour.has(at.getUTCHours()) &&
    day.has(at.getUTCDate()) &&
    month.has(at.getUTCMonth() + 1) &&
    weekday.has(at.getUTCDay());
}

/**
 * The first whole minute after `nowMs` at which any of `crons` is due, and those due then:
 * `{ at, due }` (at: ms since the epoch). Searches a year ahead at most.
 */
export function nextRun(crons, nowMs) {
  const matchers = crons.map((cron) => [cron, cronMatcher(cron)]);
  let at = Math.floor(nowMs / 60_000) * 60_000 + 60_000;
  for (let i = 0; i < 366 * 24 * 60; i++, at += 60_000) {
    const date = new Date(at);
    const due = matchers.filter(([, matches]) => matches(date)).map(([cron]) => cron);
    if (due.length > 0) return { at, due };
  }
  throw new Error(`cron-clock: none of ${crons.join(", ")} is due within a year`);
}

/**
 * Runs `crons` on their schedule, each due one by calling `run(cron)` (which asks the server to run
 * it). Answers a stop function. A run that fails is reported to `warn` and the clock goes on: the
 * server may be restarting (wrangler reloads on a change).
 */
export function startCronClock({ crons, run, warn, now = Date.now }) {
  let timer;
  let stopped = false;
  const runAll = async (due) => {
    for (const cron of due) {
      try {
        await run(cron);
      } catch (err) {
        warn(`the cron job "${cron}" did not run: ${err instanceof Error ? err.message : err}`);
      }
    }
  };
  const schedule = () => {
    if (stopped) return;
    const { at, due } = nextRun(crons, now());
    timer = setTimeout(() => runAll(due).finally(schedule), Math.max(0, at - now()));
    timer.unref?.();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
