/**
 * Timeline retention (API_CONTRACT §19): a deployment's timeline is kept 30 days after the
 * deployment ends, then deleted by the daily cron, in bounded chunks. (A timeline also goes at once
 * with its deployment: the foreign key cascades.)
 *
 * The way in is the entry of the deployment's own final status (its `created_at` is the
 * deployment's `finished_at`), through the partial index `deployment_timeline_finished_idx`: it
 * holds one row per finished timeline still kept, so a run reads only what it deletes, however
 * many old deployments have no timeline left. Each round (one batch, one round trip) deletes at
 * most RETENTION_BATCH other entries of the oldest such timelines, then the final entries left
 * alone: a final entry goes last (it need not be a timeline's last entry: its stacks' roll-up
 * follows it), so a timeline cut short by the limit is found again by the next round.
 */
import { sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { notMoving } from "../../db/moving";
import { deploymentTimeline } from "../../db/schema";
import { toIso } from "../../lib/time";
import { RETENTION_BATCH, RETENTION_MAX_STATEMENTS } from "../events/log";

export const TIMELINE_RETENTION_MS = 30 * 24 * 3600 * 1000;

export type TimelineRetentionResult = { entries: number; statements: number; done: boolean };

export async function purgeOldTimelines(
  ctx: ServiceContext,
  nowMs = Date.now(),
  limits = { batch: RETENTION_BATCH, maxStatements: RETENTION_MAX_STATEMENTS },
): Promise<TimelineRetentionResult> {
  const cutoff = toIso(nowMs - TIMELINE_RETENTION_MS);
  const batch = sql.raw(String(limits.batch));
  const result: TimelineRetentionResult = { entries: 0, statements: 0, done: false };
  // Written as the partial index's condition, so SQLite uses it; the oldest `batch` of them, none
  // of a moving organization (src/db/moving.ts: a fenced one's rows would fail the whole batch).
  const org = sql`(SELECT d.org_id FROM deployments d WHERE d.id = deployment_timeline.deployment_id)`;
  const oldest = sql`SELECT rowid, deployment_id, seq FROM deployment_timeline WHERE stack_id IS NULL AND status IN ('succeeded', 'failed', 'cancelled') AND created_at < ${cutoff} AND ${notMoving(org)} ORDER BY created_at LIMIT ${batch}`;
  while (result.statements < limits.maxStatements) {
    const [others, finals] = await ctx.db.batch([
      ctx.db
        .delete(deploymentTimeline)
        .where(
          sql`rowid IN (SELECT t.rowid FROM (${oldest}) AS f JOIN deployment_timeline AS t ON t.deployment_id = f.deployment_id AND t.seq <> f.seq LIMIT ${batch})`,
        ),
      ctx.db
        .delete(deploymentTimeline)
        .where(
          sql`rowid IN (SELECT f.rowid FROM (${oldest}) AS f WHERE NOT EXISTS (SELECT 1 FROM deployment_timeline AS t WHERE t.deployment_id = f.deployment_id AND t.seq <> f.seq))`,
        ),
    ]);
    result.statements += 2;
    const deleted = [others.meta.changes ?? 0, finals.meta.changes ?? 0];
    result.entries += (deleted[0] ?? 0) + (deleted[1] ?? 0);
    if (deleted.every((n) => n < limits.batch)) {
      result.done = true;
      break;
    }
  }
  return result;
}
