/**
 * The cron as the platform runs it (src/index.ts `scheduled`), for the tests of its jobs. A run
 * covers every database of the runtime, which the test files running in it share: its summary
 * lines ("overdue gates … settled", "idempotency keys forgotten", retention counts) may count
 * what another file left behind. So they are captured, never printed (a green run prints none of
 * the app's lines), and handed to the test, which checks those its own records cause.
 */
import { createScheduledController, env } from "cloudflare:test";
import worker from "../../src/index";
import { capturedWhile, type LogLine } from "./logs";

/** The five-minute sweep of wrangler.toml's triggers. */
export const SWEEP_CRON = "*/5 * * * *";
/** The daily retention run. */
export const RETENTION_CRON = "0 3 * * *";

/**
 * Runs `cron` on `bindings` (default: the test runtime's own); answers the `info` and `warn` lines
 * it wrote. An `error` line is left to print, or to the test's own `captureLogs("error")`.
 */
export async function runCron(cron: string = SWEEP_CRON, bindings: Env = env): Promise<LogLine[]> {
  const { lines } = await capturedWhile(["log", "warn"], () =>
    worker.scheduled(createScheduledController({ cron }), bindings),
  );
  return lines;
}

/** The count of the cron's "overdue gates … settled" line for the test database (0 without one). */
export const overdueSettled = (lines: LogLine[]) =>
  Number(
    lines.find((l) => String(l.msg).startsWith("overdue gates") && l.database === "DB" && l.level === "warn")
      ?.overdue ?? 0,
  );
