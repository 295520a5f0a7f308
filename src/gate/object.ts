/**
 * `EnvironmentGate`: one Durable Object per environment (by its id), holding the wait timers of
 * its waiting deployments (API_CONTRACT §26), so that a deployment whose `wait_until` passes is
 * released within seconds without any request, and nothing polls D1 while nothing changes.
 *
 * Why one per environment, and not the deployment's feed object (src/feed/) that already exists
 * per deployment: the environment is what protection, locks and the concurrency policy are about,
 * and its object runs its alarms one at a time, so the timers of an environment's deployments are
 * settled in order (oldest first) and never concurrently with each other; a `supersede` that one
 * release causes then meets the next release already decided. The timers due together are settled
 * together (src/services/deployments/gate.ts `settleGates`: a read and a write for many). Releases
 * that requests make (an approval, an unlock) do not pass through here: each is a compare-and-set
 * in D1, as a settling is, so a timer firing at the same moment releases nothing twice.
 *
 * Storage: one row per pending timer (deployment, when, its organization database). The alarm is
 * always the earliest of them. Alarms are delivered at least once: a crash between releasing and
 * forgetting a timer releases again next time, which the release's compare-and-set makes harmless;
 * an alarm whose handler throws is retried by the runtime. With no timer left the object deletes
 * its storage.
 */
import { DurableObject } from "cloudflare:workers";
import { createServiceContext } from "../context";
import { homeDatabaseOf } from "../db/databases";
import { loggableError } from "../errors";
import { type Migration, migrate } from "../lib/do-migrations";
import { newId } from "../lib/ids";
import { createLogger } from "../lib/log";
import { loadedOnce } from "../lib/once";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: [
      "CREATE TABLE IF NOT EXISTS timers (deployment_id TEXT PRIMARY KEY, at INTEGER NOT NULL, database TEXT NOT NULL)",
    ],
  },
  // The deployment's organization: a timer settles where the directory says it is when it fires.
  { version: 2, sql: ["ALTER TABLE timers ADD COLUMN org_id TEXT"] },
];

type Timer = { deployment_id: string; at: number; database: string; org_id: string | null };

/**
 * The gate's settling, loaded on the first alarm, not when the Worker starts: every isolate
 * evaluates this module (the class is exported from the entry), and few ever run a gate's alarm.
 * Kept once loaded (test/setup.ts loads it first).
 */
export const loadGate = loadedOnce(() => import("../services/deployments/gate"));

export class EnvironmentGate extends DurableObject<Env> {
  private ready = false;

  private setUp(): void {
    if (this.ready) return;
    migrate(this.ctx.storage, MIGRATIONS);
    this.ready = true;
  }

  /**
   * Settle `deploymentId` (of organization `orgId`, found in database `database`) at `atMs`. A call
   * made just before its organization's move switched can arrive after the switch's `rehome`: the
   * timer then names the database the organization left, and the alarm asks the directory instead.
   */
  async schedule(deploymentId: string, atMs: number, database: string, orgId?: string): Promise<void> {
    this.setUp();
    this.ctx.storage.sql.exec(
      "INSERT INTO timers (deployment_id, at, database, org_id) VALUES (?, ?, ?, ?) ON CONFLICT (deployment_id) DO UPDATE SET at = excluded.at, database = excluded.database, org_id = excluded.org_id",
      deploymentId,
      atMs,
      database,
      orgId ?? null,
    );
    await this.arm();
  }

  /**
   * Its environment's organization moved to `database` (API_CONTRACT §32): every timer settles
   * there from now on, and the alarm is set again (one the old database kept failing may have
   * spent its retries).
   */
  async rehome(database: string): Promise<void> {
    this.setUp();
    this.ctx.storage.sql.exec("UPDATE timers SET database = ?", database);
    await this.arm();
  }

  /** The alarm at the earliest timer, or none (and no storage) when none is left. */
  private async arm(): Promise<void> {
    const next = this.ctx.storage.sql
      .exec<{ at: number | null }>("SELECT min(at) AS at FROM timers")
      .one().at;
    if (next === null) {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.ready = false;
      return;
    }
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current !== next) await this.ctx.storage.setAlarm(next);
  }

  override async alarm(): Promise<void> {
    this.setUp();
    const now = Date.now();
    const due = this.ctx.storage.sql
      .exec<Timer>(
        "SELECT deployment_id, at, database, org_id FROM timers WHERE at <= ? ORDER BY at, deployment_id",
        now,
      )
      .toArray();
    const { settleGates } = await loadGate();
    const at = new Map(due.map((timer) => [timer.deployment_id, timer.at]));
    const forget = (deploymentId: string) => {
      this.ctx.storage.sql.exec(
        "DELETE FROM timers WHERE deployment_id = ? AND at = ?",
        deploymentId,
        at.get(deploymentId),
      );
    };
    try {
      // Every timer is of the environment's organization: where it is now, read once (a timer
      // scheduled just before a move switched names the database it left; one written before timers
      // named their organization, its database).
      const named = due.find((timer) => timer.org_id !== null);
      const home = named ? await homeDatabaseOf(this.env, named.org_id as string) : due[0]?.database;
      // No such organization any more: nothing of it is left to settle.
      if (home === undefined) for (const timer of due) forget(timer.deployment_id);
      else
        await settleGates(
          createServiceContext({ env: this.env, requestId: newId(), database: home }),
          due.map((timer) => timer.deployment_id),
          forget,
        );
    } catch (err) {
      // The timers not settled are kept: the runtime retries a failed alarm, and them with it.
      createLogger({ deployment_id: due[0]?.deployment_id }).error("gate timers failed", {
        error: loggableError(err),
      });
      await this.arm();
      throw err;
    }
    await this.arm();
  }
}
