/**
 * The switch of a move (API_CONTRACT §32), one of the steps of ./run.ts: once the recorded changes
 * are few, the source is fenced, the last changes applied, the limits copied, and the target's copy
 * and then the directory made to name the target; then the source marked switched and the objects
 * that keep timers and sends of the organization told where it is now. Every part can be run again
 * after a crash at any point of it and comes to the same result: the switch reads where the
 * directory says the organization is before it acts. The order of the whole, and why: ./moves.ts.
 */
import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { DIRECTORY } from "../../db/databases";
import { forgetLocations } from "../../db/locations";
import {
  auditLog,
  deployments,
  movingOrgs,
  notificationIntegrations,
  organizations,
  orgLimits,
  orgMoves,
  projects,
  webhookDeliveries,
} from "../../db/schema";
import { loggableError } from "../../errors";
import { nowIso } from "../../lib/time";
import type { MoveRecord } from "../../schemas/move";
import { forgetOrganization } from "../api-keys/authenticate";
import { wakeOrgStreams } from "../audit/stream-wake";
import { catchUp } from "./copy";
import { type Databases, type MoveProgress, moveEntry, unreachableLimits } from "./progress";

/** How long the writes of the organization may be refused while it switches, at most. */
export const SWITCH_BUDGET_MS = 6_000;

/**
 * Applies a round of recorded changes; once none are left, switches: fences the source, applies
 * the last changes (within SWITCH_BUDGET_MS, else lifts the fence and answers `later`), copies the
 * limits, and makes the target's copy and then the directory name the target.
 */
export async function catchUpOrSwitch(
  dbs: Databases,
  progress: MoveProgress,
  budgetMs = SWITCH_BUDGET_MS,
): Promise<MoveProgress | { later: MoveProgress }> {
  const { move } = progress;
  const flipped = await directoryDatabase(dbs, move.org_id);
  if (flipped === move.to) return afterFlip(dbs, progress);
  const round = await catchUp(dbs.source, dbs.target, move.org_id);
  if (round.more) return { ...progress, rowsCopied: progress.rowsCopied + round.applied };
  let rowsCopied = progress.rowsCopied + round.applied;

  const switching = await dbs.directory
    .update(orgMoves)
    .set({ state: "switching", updatedAt: nowIso(), rowsCopied })
    .where(and(eq(orgMoves.id, move.id), eq(orgMoves.state, "copying")))
    .returning({ id: orgMoves.id })
    .all();
  if (switching.length === 0) {
    const state = (
      await dbs.directory
        .select({ state: orgMoves.state })
        .from(orgMoves)
        .where(eq(orgMoves.id, move.id))
        .get()
    )?.state;
    // Cancelled meanwhile (its object undid it), or switching already (a run a crash cut short).
    if (state !== "switching") return { ...progress, phase: "done" };
  }
  const fencedAt = Date.now();
  await setFence(dbs.source, move, true);
  let switched: boolean;
  try {
    ({ rowsCopied, switched } = await switchOver(dbs, progress, rowsCopied, fencedAt, budgetMs));
  } catch (err) {
    await liftFence(dbs, move, rowsCopied);
    throw err;
  }
  if (!switched) {
    // Too much to copy within the budget: the writes go on, and the switch is tried again later,
    // counting on from the rows its rounds applied here (no later round applies them again).
    await liftFence(dbs, move, rowsCopied);
    return { later: { ...progress, rowsCopied } };
  }
  return afterFlip(dbs, { ...progress, rowsCopied });
}

/**
 * The fence lifted after a switch that did not happen (the writes go on, the move back to
 * `copying`), but only when the directory surely does not name the target yet: a flip that
 * committed and whose answer was lost must never be followed by writes to the source. The
 * completing audit entry the target's batch may have written goes first: its sequence is the one
 * the source's next entry takes, which the next round copies there, and the next switch writes it
 * again after that one.
 */
async function liftFence(dbs: Databases, move: MoveRecord, rowsCopied: number): Promise<void> {
  if ((await directoryDatabase(dbs, move.org_id)) === move.to) return;
  await dbs.target
    .delete(auditLog)
    .where(and(eq(auditLog.id, move.id), eq(auditLog.orgId, move.org_id)))
    .run();
  await setFence(dbs.source, move, false);
  await dbs.directory
    .update(orgMoves)
    .set({ state: "copying", updatedAt: nowIso(), rowsCopied })
    .where(and(eq(orgMoves.id, move.id), eq(orgMoves.state, "switching")))
    .run();
}

/**
 * Under the fence: the last changes, the limits, the target's copy of the organization's row and
 * the completing audit entry, then the directory. Not `switched` when the last changes did not fit
 * in `budgetMs` (SWITCH_BUDGET_MS; then nothing switched).
 */
async function switchOver(
  dbs: Databases,
  progress: MoveProgress,
  copiedBefore: number,
  fencedAt: number,
  budgetMs: number,
): Promise<{ rowsCopied: number; switched: boolean }> {
  const { move } = progress;
  let rowsCopied = copiedBefore;
  for (;;) {
    const last = await catchUp(dbs.source, dbs.target, move.org_id);
    rowsCopied += last.applied;
    if (!last.more) break;
    if (Date.now() - fencedAt > budgetMs) return { rowsCopied, switched: false };
  }
  const limits = await dbs.source.select().from(orgLimits).where(eq(orgLimits.orgId, move.org_id)).get();
  const { orgId: _orgId, ...values } = limits ?? { orgId: move.org_id };
  await dbs.target.batch([
    // The counts first (with the limits still out of reach), then the limits: a count over a limit
    // lowered below it is a state the source may hold (a lower limit removes nothing).
    dbs.target
      .insert(orgLimits)
      .values({ orgId: move.org_id, ...unreachableLimits() })
      .onConflictDoUpdate({
        target: orgLimits.orgId,
        set: limits
          ? {
              projectsUsed: limits.projectsUsed,
              environmentsUsed: limits.environmentsUsed,
              variablesUsed: limits.variablesUsed,
              integrationsUsed: limits.integrationsUsed,
              auditStreamsUsed: limits.auditStreamsUsed,
            }
          : unreachableLimits(),
      }),
    limits
      ? dbs.target.update(orgLimits).set(values).where(eq(orgLimits.orgId, move.org_id))
      : dbs.target.delete(orgLimits).where(eq(orgLimits.orgId, move.org_id)),
    dbs.target.update(organizations).set({ database: move.to }).where(eq(organizations.id, move.org_id)),
    // At the switch, in the organization's log, once (a run cut short after it writes it again).
    moveEntry(dbs, dbs.target, move, "internal.completeMove"),
  ]);
  await flipDirectory(dbs, move);
  return { rowsCopied, switched: true };
}

/** Sets or lifts the source's fence. */
function setFence(source: Db, move: MoveRecord, fenced: boolean) {
  return source
    .update(movingOrgs)
    .set({ fenced })
    .where(and(eq(movingOrgs.orgId, move.org_id), eq(movingOrgs.moveId, move.id)))
    .run();
}

/** The database the directory names for the organization. */
export async function directoryDatabase(dbs: Databases, orgId: string): Promise<string | undefined> {
  return (
    await dbs.directory
      .select({ database: organizations.database })
      .from(organizations)
      .where(eq(organizations.id, orgId))
      .get()
  )?.database;
}

/**
 * The directory names the target: from here on every request of the organization goes there. Where
 * the source is the directory's own database, its fence is lifted for the one statement (the
 * organization's row there is fenced like any other of it) and set again, as switched, in the same
 * transaction.
 */
async function flipDirectory(dbs: Databases, move: MoveRecord): Promise<void> {
  const flip = dbs.directory
    .update(organizations)
    .set({ database: move.to })
    .where(eq(organizations.id, move.org_id));
  if (move.from === DIRECTORY) {
    const fence = (set: { fenced: boolean; switched?: boolean }) =>
      dbs.directory.update(movingOrgs).set(set).where(eq(movingOrgs.orgId, move.org_id));
    await dbs.directory.batch([fence({ fenced: false }), flip, fence({ fenced: true, switched: true })]);
    return;
  }
  await flip.run();
}

/**
 * After the directory names the target: the source marked switched (a queue message that met its
 * fence then goes to the target), the target's sweeps let in, this isolate's cached keys of the
 * organization forgotten, and the objects that keep timers and sends of the organization told
 * where it is now.
 */
async function afterFlip(dbs: Databases, progress: MoveProgress): Promise<MoveProgress> {
  const { move } = progress;
  await dbs.source
    .update(movingOrgs)
    .set({ switched: true })
    .where(and(eq(movingOrgs.orgId, move.org_id), eq(movingOrgs.moveId, move.id)))
    .run();
  await dbs.target
    .delete(movingOrgs)
    .where(and(eq(movingOrgs.orgId, move.org_id), eq(movingOrgs.incoming, true)))
    .run();
  forgetOrganization(move.org_id);
  forgetLocations();
  try {
    await rehome(dbs.ctx, move.org_id);
  } catch (err) {
    // The cron's sweeps on the target find what was not told (a gate's overdue timer, a stream
    // behind its log, a stuck delivery) within minutes.
    dbs.ctx.log.error("move: objects not all told the new database; the sweeps follow up", {
      move_id: move.id,
      error: loggableError(err),
    });
  }
  return { ...progress, phase: "switched", switchedAt: progress.switchedAt ?? Date.now() };
}

/** Tells the organization's gates, delivery lanes and audit streams its new database (`ctx`'s). */
async function rehome(ctx: ServiceContext, orgId: string): Promise<void> {
  const { db } = ctx;
  const [waiting, lanes] = await Promise.all([
    db
      .selectDistinct({ id: deployments.environmentId })
      .from(deployments)
      .where(and(eq(deployments.orgId, orgId), eq(deployments.status, "waiting")))
      .all(),
    db
      .selectDistinct({ id: webhookDeliveries.integrationId })
      .from(webhookDeliveries)
      .innerJoin(notificationIntegrations, eq(notificationIntegrations.id, webhookDeliveries.integrationId))
      .innerJoin(projects, eq(projects.id, notificationIntegrations.projectId))
      .where(and(eq(projects.orgId, orgId), eq(webhookDeliveries.status, "pending")))
      .all(),
  ]);
  await Promise.all([
    ...waiting.map(({ id }) =>
      ctx.environmentGates.get(ctx.environmentGates.idFromName(id)).rehome(ctx.database),
    ),
    ...lanes.map(({ id }) => ctx.deliveryLanes.get(ctx.deliveryLanes.idFromName(id)).rehome(ctx.database)),
    wakeOrgStreams(ctx, orgId),
  ]);
}
