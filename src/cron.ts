/**
 * The cron (wrangler.toml [triggers]), loaded by src/index.ts on the isolate's first scheduled run
 * rather than at its start: the sweeps and retention work reach most of the services, which no
 * request needs all of.
 *
 * Dispatch on the cron expression. The sweeps (events, deliveries, gates, disconnects) run only here: one sweeper every few minutes,
 * rather than one per queue batch, keeps two fan-outs of the same event from racing (and a lane
 * takes a delivery it holds only once). The daily run removes what outlived its retention (audit
 * entries, events and their deliveries, deployments' timelines). Both forget rotated-out signing
 * secrets whose overlap ended and the Idempotency-Keys of writes older than 24 h.
 * Each database (the directory and every organization database) runs on its own: one that fails
 * holds up no other, and the run then fails as a whole, so the platform records it.
 */
import { createServiceContext, inDatabase, type ServiceContext } from "./context";
import { DIRECTORY } from "./db/databases";
import { loggableError } from "./errors";
import { forgetExpiredKeys } from "./idempotency/executed";
import { newId } from "./lib/ids";
import { purgeExpiredAuditEntries } from "./services/audit/log";
import { wakeLaggingStreams } from "./services/audit/stream-wake";
import { settleOverdueGates } from "./services/deployments/gate-sweeps";
import { purgeOldTimelines } from "./services/deployments/timeline-retention";
import { finishOrganizations } from "./services/directory";
import { sweepStaleEvents } from "./services/events/fanout";
import { purgeOldEvents } from "./services/events/log";
import { forgetExpiredSecrets } from "./services/integrations/operator";
import { sweepStuckDeliveries } from "./services/integrations/sweep";
import { resumeStalledMoves } from "./services/moves/moves";
import { resendStuckDisconnects } from "./services/projects/disconnect";

/** The daily cron (wrangler.toml): retention work, shared by every kind of record that has one. */
const DAILY_CRON = "0 3 * * *";

/**
 * One cron run on one database (`ctx`'s). Its steps are independent: one that fails (an object of
 * one organization's that will not answer, say) is logged and the steps after it still run, so no
 * tenant's failure holds up another's sweep; the run then fails as a whole.
 */
async function cronRun(ctx: ServiceContext, cron: string): Promise<void> {
  const failed: unknown[] = [];
  const step = async (name: string, work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      failed.push(err);
      ctx.log.error("cron step failed", { database: ctx.database, step: name, error: loggableError(err) });
    }
  };
  await step("secrets", () => forgetExpiredSecrets(ctx));
  await step("idempotency keys", async () => {
    const keys = await forgetExpiredKeys(ctx);
    if (keys.cleared > 0) ctx.log.info("idempotency keys forgotten", { database: ctx.database, ...keys });
  });
  if (cron === DAILY_CRON) {
    await step("audit retention", async () => {
      const removed = await purgeExpiredAuditEntries(ctx);
      ctx.log.info("audit log retention", { database: ctx.database, removed });
    });
    await step("event retention", async () => {
      ctx.log.info("event retention", { database: ctx.database, ...(await purgeOldEvents(ctx)) });
    });
    await step("timeline retention", async () => {
      ctx.log.info("timeline retention", { database: ctx.database, ...(await purgeOldTimelines(ctx)) });
    });
  } else {
    await sweep(ctx, step);
  }
  if (failed.length)
    throw new AggregateError(failed, `${failed.length} cron step(s) failed on ${ctx.database}`);
}

type Step = (name: string, work: () => Promise<unknown>) => Promise<void>;

/** The five-minute sweeps, each a step of its own. */
async function sweep(ctx: ServiceContext, step: Step): Promise<void> {
  const { database } = ctx;
  await step("events", () => sweepStaleEvents(ctx));
  await step("gates", async () => {
    const overdue = await settleOverdueGates(ctx);
    if (overdue > 0)
      ctx.log.warn(
        "overdue gates (wait timers, decided reviews, released locks, supersedes) settled by the cron",
        { database, overdue },
      );
  });
  await step("disconnects", async () => {
    const disconnects = await resendStuckDisconnects(ctx);
    if (disconnects > 0)
      ctx.log.warn("disconnects whose message was lost sent again", { database, disconnects });
  });
  await step("audit streams", async () => {
    const streams = await wakeLaggingStreams(ctx);
    if (streams > 0) ctx.log.info("audit streams behind their log woken", { database, streams });
  });
  await step("deliveries", async () => {
    const stuck = await sweepStuckDeliveries(ctx);
    if (stuck.taken > 0) ctx.log.warn("stuck deliveries handed to their lanes again", { database, ...stuck });
  });
  await step("moves", async () => {
    const moves = await resumeStalledMoves(ctx);
    if (moves > 0) ctx.log.warn("stalled organization moves woken", { moves });
  });
  // Last, so the deliveries' sweeps never wait on it.
  await step("organizations", () => finishOrganizations(ctx));
}

/** The Worker's `scheduled` handler: one cron run on every database. */
export async function runScheduled(
  controller: ScheduledController,
  env: Env,
  exec?: ExecutionContext,
): Promise<void> {
  const waitUntil = exec ? (work: Promise<unknown>) => exec.waitUntil(work) : undefined;
  const base = createServiceContext({ env, requestId: newId(), ...(waitUntil ? { waitUntil } : {}) });
  const databases = [...new Set([DIRECTORY, ...base.config.orgDatabases])];
  const runs = await Promise.allSettled(
    databases.map((database) => cronRun(inDatabase(base, database), controller.cron)),
  );
  const failed = databases.filter((_, i) => runs[i]?.status === "rejected");
  for (const [i, run] of runs.entries()) {
    if (run.status === "rejected") {
      base.log.error("cron run failed", { database: databases[i], error: loggableError(run.reason) });
    }
  }
  if (failed.length) throw new Error(`cron run failed on ${failed.join(", ")}`);
}
