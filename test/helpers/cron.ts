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

/**
 * A supersede the cron's sweep owes now: `supersede` in force in `environmentId` since three
 * minutes ago, and `deploymentId`'s timeline (its entry into `queued`) moved to two minutes ago, so
 * over the minute the sweep leaves to the request (src/services/deployments/gate-sweeps.ts).
 */
export async function supersedeDue(environmentId: string, deploymentId: string): Promise<void> {
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  await env.DB.batch([
    env.DB.prepare(
      "UPDATE environment_protections SET updated_at = ?1, concurrency_since = ?1 WHERE environment_id = ?2",
    ).bind(ago(3 * 60_000), environmentId),
    env.DB.prepare("UPDATE deployment_timeline SET created_at = ? WHERE deployment_id = ?").bind(
      ago(2 * 60_000),
      deploymentId,
    ),
  ]);
}
