/**
 * `AuditStream`: one Durable Object per audit log stream (API_CONTRACT §30), the one place its
 * batches are sent from, so they go out in order and one at a time, and a slow or failing
 * receiver holds up its own stream only (never another stream, a webhook, or a request).
 *
 * It is woken (`wake`) by each request that grows its organization's log, once it committed (or,
 * should that fail, by the queue's consumer: src/services/audit/stream-wake.ts), and by the cron's
 * sweep of streams left behind; it sends from
 * its alarm, so a crash mid-run is retried by the runtime, and a batch whose acknowledgement was not
 * recorded is sent again (src/services/audit/stream-delivery.ts: D1 holds the stream's position,
 * this object only the stream and its organization; each run sends from the database the directory
 * names for it). With nothing to send it sets no alarm and costs nothing.
 */
import { DurableObject } from "cloudflare:workers";
import { createServiceContext } from "../context";
import { homeDatabaseOf } from "../db/databases";
import { isOrganizationMoved, loggableError } from "../errors";
import { newId } from "../lib/ids";
import { createLogger } from "../lib/log";
import { loadedOnce } from "../lib/once";

/**
 * What sends, loaded on the first alarm, not when the Worker starts (this class is in every
 * isolate's entry), and kept: later alarms import nothing (test/setup.ts loads it first).
 */
export const loadStreamDelivery = loadedOnce(() => import("../services/audit/stream-delivery"));

/** How long one alarm sends before it hands over to the next (a paused stream's backlog, say). */
const RUN_BUDGET_MS = 20_000;

/**
 * The stream, its organization, and the database the wake-up named. A wake-up sent before a move
 * switched (a queue message of a write just before its fence) can arrive after one that names the
 * new database: each run asks the directory where the organization is (`homeDatabaseOf`), never the wake-up.
 */
type Target = { streamId: string; database: string; orgId?: string };

const sameTarget = (a: Target | undefined, b: Target) =>
  a?.streamId === b.streamId && a.database === b.database && a.orgId === b.orgId;

export class AuditStream extends DurableObject<Env> {
  /** The target this instance last stored: a wake that names it again writes nothing. */
  private stored: Target | undefined;

  /** Send what follows what the stream's receiver acknowledged, soon. */
  async wake(target: Target): Promise<void> {
    await this.remember(target);
    const alarm = await this.ctx.storage.getAlarm();
    const now = Date.now();
    if (alarm === null || alarm > now) await this.ctx.storage.setAlarm(now);
  }

  override async alarm(): Promise<void> {
    const target = await this.ctx.storage.get<Target>("target");
    if (!target) return;
    const { deliverStream, STREAM_RETRY_MS } = await loadStreamDelivery();
    const schedule = retrySchedule(this.env) ?? STREAM_RETRY_MS;
    let next: { at: number } | null;
    try {
      const database = target.orgId ? await homeDatabaseOf(this.env, target.orgId) : target.database;
      // No such organization: its streams went with it.
      if (database === undefined) return;
      if (database !== target.database) await this.remember({ ...target, database });
      const ctx = createServiceContext({ env: this.env, requestId: newId(), database });
      next = await deliverStream(ctx, target.streamId, RUN_BUDGET_MS, schedule);
    } catch (err) {
      // D1 failed (a batch may have been sent and its acknowledgement not recorded): the run is
      // tried again shortly, and the batch sent again. A crash that loses this alarm is the
      // runtime's to retry, and the cron's sweep wakes the stream if all else fails. A move's
      // fence refusing the run's write (API_CONTRACT §32) is no failure: the organization is
      // switching databases, and the next run reads where it went (as the queue's consumer does).
      if (!isOrganizationMoved(err)) {
        createLogger({ stream_id: target.streamId }).error("audit stream run failed; retried", {
          error: loggableError(err),
        });
      }
      next = { at: Date.now() + (schedule[0] ?? 1000) };
    }
    if (next) await this.ctx.storage.setAlarm(next.at);
  }

  private async remember(target: Target): Promise<void> {
    if (sameTarget(this.stored, target)) return;
    const { streamId, database, orgId } = target;
    this.stored = orgId === undefined ? { streamId, database } : { streamId, database, orgId };
    await this.ctx.storage.put("target", this.stored);
  }
}

/**
 * AUDIT_STREAM_RETRY_MS (comma-separated milliseconds, set only by the tests, so that a failing
 * receiver's retries take milliseconds); else the contract's schedule.
 */
function retrySchedule(env: Env): number[] | undefined {
  const raw = (env as Env & { AUDIT_STREAM_RETRY_MS?: string }).AUDIT_STREAM_RETRY_MS;
  if (!raw) return undefined;
  const values = raw.split(",").map(Number);
  return values.every((v) => Number.isSafeInteger(v) && v > 0) ? values : undefined;
}
