/**
 * A delivery lane: one Durable Object per notification integration (`idFromName(integration id)`),
 * which makes the attempts of that integration's deliveries and keeps their schedule.
 *
 * Why not the queue's own retries: a queue consumer invocation lasts as long as its slowest
 * message (and holds its `waitUntil` work too), batches of one queue wait for one another, and a
 * retry's delay counts from the end of its batch. With every delivery on one queue, one receiver
 * that hangs for its 15 s timeout held up every other tenant's deliveries, their retries and the
 * project work behind them by minutes. A lane's attempts run in the lane's own alarm, beside every
 * other lane's: a receiver that hangs holds up only its own integration's deliveries (at most
 * MAX_IN_FLIGHT of them at once), and a retry runs at the instant its delivery record names as
 * `next_attempt_at`.
 *
 * The lane keeps, in its SQLite storage, each delivery still to send: its series, whether an
 * operator asked for it (`manual`: sent even while the integration is disabled), how many attempts
 * of its series were made and when the next is due. An entry leaves the lane only once its
 * outcome is recorded in D1 (or handed to the dead-letter queue after the last try), so a lane
 * that dies mid-attempt tries again when its alarm runs again: at least once, as before.
 *
 * The lane's folder, like src/feed/: this object (its run and what each outcome does to an entry),
 * its storage (./storage.ts, its table in ./migrations.ts), what it is handed (./protocol.ts), how
 * services hand it over (./client.ts), how it records outcomes together (./group-commit.ts), and
 * how it skips a disabled integration's backlog (./bulk-skip.ts).
 * What an attempt does is the integrations' service (src/services/integrations/attempts.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { createServiceContext, type ServiceContext } from "../context";
import { DIRECTORY } from "../db/databases";
import { startAfter } from "../db/session";
import { isOrganizationMoved, loggableError } from "../errors";
import { migrate } from "../lib/do-migrations";
import { newId } from "../lib/ids";
import { createLogger } from "../lib/log";
import type { WebhookDeliveryMessage } from "../services/events/queue";
import { type DeliveryDecision, processDelivery } from "../services/integrations/attempts";
import { markDeliveryFailed } from "../services/integrations/dead-letter";
import type { HeldEntry, LaneEntry } from "../services/integrations/lane-protocol";
import { MAX_ATTEMPTS, retryDelaySeconds } from "../webhooks/retry";
import { skipDueInBulk } from "./bulk-skip";
import { groupCommit } from "./group-commit";
import { MIGRATIONS } from "./migrations";
import {
  deferEntry,
  dropEntry,
  dueEntries,
  heldEntries,
  type LaneRow,
  nextDueBesides,
  rehomeEntry,
  retryEntry,
  soonestDue,
  spendEntry,
  takeEntries,
} from "./storage";

/** Attempts one lane makes at once: a receiver that hangs ties up this many, of its own, at most. */
export const MAX_IN_FLIGHT = 10;
/** How long one alarm run starts attempts (its wall time is bounded); the next run goes on. */
const RUN_MS = 5 * 60_000;
/** How soon a step that failed (a hand-over to the dead-letter queue, say) is tried again. */
const RETRY_LATER_MS = 60_000;
/** How soon an entry whose organization is fenced by a move is looked at again (a switch takes seconds). */
const HELD_MS = 1000;

export class DeliveryLane extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Whether this object's storage has had its migrations (./migrations.ts) in this lifetime. */
  private migrated = false;
  /** When the pending alarm fires (ms), or null when none is set. */
  private alarmAt: number | null = null;
  /** Set while an alarm run is making attempts: new entries wake it instead of setting an alarm. */
  private running = false;
  private wake: (() => void) | undefined;
  /**
   * Set when an attempt of this run found the integration disabled: what else is due is skipped
   * together (./bulk-skip.ts) until a statement skips less than it was given.
   */
  private skipping = false;
  /** The outcomes of attempts that end together go in one batch (./group-commit.ts). */
  private readonly outcomes = groupCommit();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * Takes deliveries due now. One already held in the same or a newer series is left as it is
   * (a fan-out handed over again, or the sweep, never sends it twice); a newer series replaces
   * the older one's entry, its attempts counted afresh. Returns how many were taken.
   */
  schedule(entries: readonly LaneEntry[]): number {
    this.ensureMigrated();
    const now = Date.now();
    const taken = this.ctx.storage.transactionSync(() => takeEntries(this.sql, entries, now));
    if (this.running) {
      if (taken > 0) this.wake?.();
    } else {
      // Whatever it took: a lane whose alarm gave up (its retries spent) holds entries with no
      // alarm set, and the sweep handing them over again must wake it.
      const next = soonestDue(this.sql);
      if (next !== null) this.scheduleRun(Math.max(now, next));
    }
    return taken;
  }

  /**
   * Its integration's organization moved to `database` (API_CONTRACT §32): every entry is read and
   * recorded there from now on, from its primary (a bookmark of the old database means nothing in
   * the new one). Returns how many entries it holds.
   */
  rehome(database: string): number {
    this.ensureMigrated();
    const moved = this.sql.exec("UPDATE lane SET database = ?, bookmark = NULL", database).rowsWritten;
    const next = soonestDue(this.sql);
    if (next !== null && !this.running) this.scheduleRun(Math.max(Date.now(), next));
    return moved;
  }

  /** What the lane holds, soonest due first (for tests and diagnostics). */
  entries(): HeldEntry[] {
    this.ensureMigrated();
    return heldEntries(this.sql);
  }

  /**
   * Makes the attempts that are due, MAX_IN_FLIGHT at a time, taking more as attempts end or new
   * entries arrive, until none is due (or the run has gone on for RUN_MS); then sets the alarm
   * for the next one due. An empty lane ends with no storage at all.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.ensureMigrated();
    this.running = true;
    this.skipping = false;
    const started = Date.now();
    const inFlight = new Map<string, Promise<void>>();
    try {
      for (;;) {
        const starting = Date.now() - started < RUN_MS;
        if (starting && this.skipping) this.skipping = await skipDueInBulk(this.sql, this.env, inFlight);
        if (starting) {
          for (const row of dueEntries(this.sql, MAX_IN_FLIGHT - inFlight.size, inFlight, Date.now())) {
            const attempt = this.attempt(row).finally(() => inFlight.delete(row.delivery_id));
            inFlight.set(row.delivery_id, attempt);
          }
        }
        if (inFlight.size === 0) break;
        // Until an attempt ends, an entry arrives, or (while there is room) the next one falls due.
        const next = starting && inFlight.size < MAX_IN_FLIGHT ? nextDueBesides(this.sql, inFlight) : null;
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          ...inFlight.values(),
          new Promise<void>((resolve) => {
            this.wake = resolve;
            if (next !== null) timer = setTimeout(resolve, Math.max(0, next - Date.now()));
          }),
        ]);
        clearTimeout(timer);
        this.wake = undefined;
      }
    } finally {
      this.running = false;
      this.wake = undefined;
      await this.afterRun();
    }
  }

  /**
   * One attempt of `row`'s delivery, and what its outcome does to the entry. Never throws. Its
   * first read starts from the entry's bookmark (a replica that has the delivery row), its
   * outcome is written on the primary, conditional on the row as it is there.
   */
  private async attempt(row: LaneRow): Promise<void> {
    let ctx: ServiceContext | undefined;
    try {
      ctx = createServiceContext({
        env: this.env,
        requestId: newId(),
        session: startAfter(row.bookmark),
        database: row.database ?? DIRECTORY,
      });
      await this.attemptIn(ctx, row);
    } catch (err) {
      // Tried again a little later, not at once: a step that keeps failing must not spin.
      (ctx?.log ?? createLogger({ database: row.database })).error("delivery lane step failed", {
        delivery_id: row.delivery_id,
        error: loggableError(err),
      });
      try {
        deferEntry(this.sql, row, Date.now() + RETRY_LATER_MS);
      } catch {
        // Storage itself failed: the object is being reset, and its alarm runs again.
      }
    }
  }

  private async attemptIn(ctx: ServiceContext, row: LaneRow): Promise<void> {
    if (row.tries >= MAX_ATTEMPTS) return this.deadLetter(ctx, row);
    let decision: DeliveryDecision;
    // Where the retry's first read starts: from what this attempt saw and wrote (its outcome, when
    // it was recorded); after an attempt that threw, from the primary, since the bookmark itself
    // may be what failed (one a replica cannot serve), and it must not fail every try alike.
    let retryFrom: string | null = null;
    try {
      decision = await processDelivery(ctx, row.delivery_id, row.tries + 1, {
        manual: row.manual === 1,
        series: row.series,
        record: this.outcomes,
      });
      retryFrom =
        (decision.action === "retry" ? decision.bookmark : null) ?? ctx.session.bookmark() ?? row.bookmark;
    } catch (err) {
      if (isOrganizationMoved(err)) {
        // A move's fence, set while the attempt was out, refused its record (API_CONTRACT §32): no
        // failed try (whose delay grows to hours), but held, as a delivery that meets the fence
        // before it is sent; looked at again in a moment, from where the organization then is.
        decision = { action: "held" };
      } else {
        // Not recorded (D1 failed, say): counted like a failed attempt, so it cannot loop forever.
        ctx.log.error("delivery attempt failed; will retry", {
          delivery_id: row.delivery_id,
          error: loggableError(err),
        });
        const delay = retryDelaySeconds(row.tries + 1);
        decision =
          delay === null
            ? { action: "dead-letter" }
            : { action: "retry", delaySeconds: delay, at: Date.now() + delay * 1000 };
      }
    }
    if (decision.action === "ack") {
      dropEntry(this.sql, row);
      return;
    }
    if (decision.action === "skipped") {
      dropEntry(this.sql, row);
      this.skipping = true;
      return;
    }
    if (decision.action === "moved") {
      // Its organization switched databases after this entry was handed over: due at once there.
      rehomeEntry(this.sql, row, decision.to, Date.now());
      return;
    }
    if (decision.action === "held") {
      deferEntry(this.sql, row, Date.now() + HELD_MS);
      return;
    }
    ctx.log.warn("webhook delivery failed", { delivery_id: row.delivery_id, ...decision });
    if (decision.action === "retry") {
      // Due again exactly when the delivery record says (its `next_attempt_at`).
      retryEntry(this.sql, row, decision.at, retryFrom);
      return;
    }
    spendEntry(this.sql, row, MAX_ATTEMPTS);
    await this.deadLetter(ctx, row);
  }

  /**
   * After the last try the delivery is recorded `failed` and goes to the dead-letter queue
   * (API_CONTRACT §8). The lane records it first: a dead letter whose consumer kept failing would
   * be dropped by the queue and leave the delivery `pending` with nothing due, which neither the
   * sweep nor recover takes; the consumer's own record is then a no-op (same series, no longer
   * pending). Until both are done, the lane keeps the entry and tries again.
   */
  private async deadLetter(ctx: ServiceContext, row: LaneRow): Promise<void> {
    const message: WebhookDeliveryMessage = {
      kind: "webhook.deliver",
      delivery_id: row.delivery_id,
      series: row.series,
      database: ctx.database,
    };
    try {
      await markDeliveryFailed(ctx, row.delivery_id, row.series);
      await this.env.EVENTS_DLQ.send(message, { contentType: "json" });
      dropEntry(this.sql, row);
    } catch (err) {
      ctx.log.error("dead-letter send failed; will retry", {
        delivery_id: row.delivery_id,
        error: loggableError(err),
      });
      deferEntry(this.sql, row, Date.now() + RETRY_LATER_MS);
    }
  }

  /** The alarm for the next entry due, or, with none left, no storage at all. */
  private async afterRun(): Promise<void> {
    const next = soonestDue(this.sql);
    if (next !== null) {
      this.scheduleRun(next);
      return;
    }
    await this.ctx.storage.deleteAll();
    this.migrated = false;
  }

  private scheduleRun(at: number) {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    // Not awaited: like the SQL writes, the alarm write commits before the call returns.
    void this.ctx.storage.setAlarm(at);
  }

  /**
   * The lane's table (./migrations.ts), made on its first use rather than at its start: a lane that
   * deleted all of its storage (`afterRun`) keeps none until it is handed a delivery again.
   */
  private ensureMigrated() {
    if (this.migrated) return;
    migrate(this.ctx.storage, MIGRATIONS);
    this.migrated = true;
  }
}
