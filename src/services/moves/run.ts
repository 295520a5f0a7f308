/**
 * The steps of one move (API_CONTRACT §32), as its object (src/org-move/object.ts) runs them from
 * its alarm: each takes the move's progress, does a bounded piece of work, and returns the
 * progress after it, which the object stores before the next. Every step can be run again after a
 * crash at any point of it and comes to the same result (./copy.ts's writes are upserts and
 * deletes by key; the switch reads where the directory says the organization is before it acts).
 * The order of the whole, and why: ./moves.ts.
 */
import { and, eq, sql } from "drizzle-orm";
import { createServiceContext, type ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { DIRECTORY } from "../../db/databases";
import { forgetLocations } from "../../db/locations";
import {
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
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { MoveRecord } from "../../schemas/move";
import { forgetOrganization } from "../api-keys/authenticate";
import { auditEntry } from "../audit/entry";
import { wakeOrgStreams } from "../audit/stream-wake";
import {
  COPY_START,
  type CopyCursor,
  catchUp,
  copyChunk,
  REMOVE_START,
  type RemoveCursor,
  removeChunk,
} from "./copy";

export type MovePhase = "copy" | "catchup" | "switched" | "cleanup" | "undo" | "done";

/** What a move's object keeps. */
export type MoveProgress = {
  move: MoveRecord;
  phase: MovePhase;
  cursor: CopyCursor;
  /** Where removing the organization from a database (the source's cleanup, an undo's target) stands. */
  removal: RemoveCursor;
  rowsCopied: number;
  /** Failed runs in a row (the retry's backoff; before the switch, MOVE_ATTEMPTS of them fail it). */
  failures: number;
  /** When the directory came to name the target (ms), once it has. */
  switchedAt: number | null;
  /** How a move that is undone ends. */
  outcome: { state: "cancelled" | "failed"; error: string | null } | null;
};

export function startProgress(move: MoveRecord): MoveProgress {
  return {
    move,
    phase: "copy",
    cursor: COPY_START,
    removal: REMOVE_START,
    rowsCopied: move.rows_copied,
    failures: 0,
    switchedAt: null,
    outcome: null,
  };
}

/** How long the writes of the organization may be refused while it switches, at most. */
export const SWITCH_BUDGET_MS = 6_000;
/** Runs that fail in a row before a move that has not switched fails (and is undone). */
export const MOVE_ATTEMPTS = 5;
/** How long a switched move waits before it removes the organization from its old database. */
export const MOVE_SETTLE_MS = 35_000;
/** Limits no copy can reach: the target's while the rows arrive (the real ones come at the switch). */
const UNREACHABLE = 1_000_000_000_000;

type Databases = { source: Db; target: Db; directory: Db; ctx: ServiceContext };

function databasesOf(env: Env, move: MoveRecord): Databases {
  const ctx = createServiceContext({ env, requestId: newId(), database: move.to });
  return {
    source: ctx.openSession({ mode: "first-primary" }, move.from).db,
    target: ctx.db,
    directory: ctx.openSession({ mode: "first-primary" }, DIRECTORY).db,
    ctx,
  };
}

/**
 * Runs the move until `deadline` (ms), until it must wait, or until `interrupted` says so between
 * two steps (a cancel waiting), handing `saved` its progress after every step; returns its
 * progress and when to run again (null: it is finished).
 */
export async function runMove(
  env: Env,
  progress: MoveProgress,
  run: { deadline: number; settleMs: number; interrupted: () => boolean },
  saved: (progress: MoveProgress) => Promise<void>,
): Promise<{ progress: MoveProgress; at: number | null }> {
  const dbs = databasesOf(env, progress.move);
  const { deadline, settleMs, interrupted } = run;
  let current = progress;
  for (let first = true; Date.now() < deadline && !interrupted(); first = false) {
    if (!first) await saved(current);
    switch (current.phase) {
      case "copy":
        current = await copy(dbs, current);
        break;
      case "catchup": {
        const next = await catchUpOrSwitch(dbs, current);
        if (next === "later") {
          await recordProgress(dbs, current);
          return { progress: current, at: Date.now() + 2_000 };
        }
        current = next;
        break;
      }
      case "switched": {
        const at = (current.switchedAt ?? 0) + settleMs;
        if (Date.now() < at) {
          await recordProgress(dbs, current);
          return { progress: current, at };
        }
        // The fence goes first: what follows deletes the organization's rows here.
        await dbs.source.delete(movingOrgs).where(eq(movingOrgs.orgId, current.move.org_id)).run();
        current = { ...current, phase: "cleanup", removal: REMOVE_START };
        break;
      }
      case "cleanup": {
        const removal = await removeChunk(
          dbs.source,
          current.move.org_id,
          current.move.from === DIRECTORY,
          current.removal,
        );
        if (removal) {
          current = { ...current, removal };
          break;
        }
        await finish(dbs, current, "completed", null);
        return { progress: { ...current, phase: "done" }, at: null };
      }
      case "undo": {
        const next = await undoStep(dbs, current);
        if (next) {
          current = next;
          break;
        }
        await finish(dbs, current, current.outcome?.state ?? "failed", current.outcome?.error ?? null);
        return { progress: { ...current, phase: "done" }, at: null };
      }
      case "done":
        return { progress: current, at: null };
    }
  }
  await recordProgress(dbs, current);
  return { progress: current, at: Date.now() };
}

/** One chunk of the copy; the organization's own row first, then the target's limits lifted. */
async function copy(dbs: Databases, progress: MoveProgress): Promise<MoveProgress> {
  const { move } = progress;
  if (progress.cursor.step === 0 && progress.cursor.after === null) {
    // From here on the target's sweeps leave the organization alone (its rows are a copy in the making).
    await dbs.target
      .insert(movingOrgs)
      .values({ orgId: move.org_id, moveId: move.id, toDatabase: move.to, incoming: true })
      .onConflictDoUpdate({
        target: movingOrgs.orgId,
        set: { moveId: move.id, toDatabase: move.to, incoming: true, fenced: false, switched: false },
      })
      .run();
  }
  const { next, copied } = await copyChunk(dbs.source, dbs.target, move.org_id, progress.cursor);
  if (progress.cursor.step === 0) {
    await dbs.target
      .insert(orgLimits)
      .values({ orgId: move.org_id, ...unreachableLimits() })
      .onConflictDoUpdate({ target: orgLimits.orgId, set: unreachableLimits() })
      .run();
  }
  const rowsCopied = progress.rowsCopied + copied;
  return next
    ? { ...progress, cursor: next, rowsCopied }
    : { ...progress, phase: "catchup", cursor: progress.cursor, rowsCopied };
}

function unreachableLimits() {
  return {
    projectsLimit: UNREACHABLE,
    environmentsLimit: UNREACHABLE,
    variablesLimit: UNREACHABLE,
    apiKeysLimit: UNREACHABLE,
    integrationsLimit: UNREACHABLE,
    auditStreamsLimit: UNREACHABLE,
    deploymentsPerDayLimit: UNREACHABLE,
  };
}

/**
 * Applies a round of recorded changes; once none are left, switches: fences the source, applies
 * the last changes (within SWITCH_BUDGET_MS, else lifts the fence and answers "later"), copies the
 * limits, and makes the target's copy and then the directory name the target.
 */
async function catchUpOrSwitch(dbs: Databases, progress: MoveProgress): Promise<MoveProgress | "later"> {
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
    ({ rowsCopied, switched } = await switchOver(dbs, progress, rowsCopied, fencedAt));
  } catch (err) {
    await liftFence(dbs, move, rowsCopied);
    throw err;
  }
  if (!switched) {
    // Too much to copy within the budget: the writes go on, and the switch is tried again later.
    await liftFence(dbs, move, rowsCopied);
    return "later";
  }
  return afterFlip(dbs, { ...progress, rowsCopied });
}

/**
 * The fence lifted after a switch that did not happen (the writes go on, the move back to
 * `copying`), but only when the directory surely does not name the target yet: a flip that
 * committed and whose answer was lost must never be followed by writes to the source.
 */
async function liftFence(dbs: Databases, move: MoveRecord, rowsCopied: number): Promise<void> {
  if ((await directoryDatabase(dbs, move.org_id)) === move.to) return;
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
 * in SWITCH_BUDGET_MS (then nothing switched).
 */
async function switchOver(
  dbs: Databases,
  progress: MoveProgress,
  copiedBefore: number,
  fencedAt: number,
): Promise<{ rowsCopied: number; switched: boolean }> {
  const { move } = progress;
  let rowsCopied = copiedBefore;
  for (;;) {
    const last = await catchUp(dbs.source, dbs.target, move.org_id);
    rowsCopied += last.applied;
    if (!last.more) break;
    if (Date.now() - fencedAt > SWITCH_BUDGET_MS) return { rowsCopied, switched: false };
  }
  const limits = await dbs.source.select().from(orgLimits).where(eq(orgLimits.orgId, move.org_id)).get();
  const entryCtx: ServiceContext = {
    ...dbs.ctx,
    request: { operationId: "internal.completeMove", ip: null, userAgent: null },
  };
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
    auditEntry(entryCtx, {
      id: move.id,
      orgId: move.org_id,
      target: { type: "organization", id: move.org_id },
      changes: { database: { from: move.from, to: move.to } },
      when: sql`NOT EXISTS (SELECT 1 FROM audit_log WHERE id = ${move.id})`,
    }),
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
async function directoryDatabase(dbs: Databases, orgId: string): Promise<string | undefined> {
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

/**
 * One step of undoing a move that has not switched: the capture in the source stopped (and its
 * recorded changes forgotten), then the target's copy removed. Returns the progress after it, or
 * null once done.
 */
async function undoStep(dbs: Databases, progress: MoveProgress): Promise<MoveProgress | null> {
  const { move } = progress;
  if ((await directoryDatabase(dbs, move.org_id)) === move.to) {
    throw new Error("a switched move cannot be undone");
  }
  await dbs.source
    .delete(movingOrgs)
    .where(and(eq(movingOrgs.orgId, move.org_id), eq(movingOrgs.moveId, move.id)))
    .run();
  const forgotten = await dbs.source.run(
    sql`DELETE FROM move_changes WHERE rowid IN (SELECT rowid FROM move_changes WHERE org_id = ${move.org_id} LIMIT 500)`,
  );
  if ((forgotten.meta.changes ?? 0) > 0) return progress;
  const removal = await removeChunk(dbs.target, move.org_id, move.to === DIRECTORY, progress.removal);
  return removal ? { ...progress, removal } : null;
}

/** Undoes a move that has not switched at once (a cancel), as its runs would. */
export async function undoMove(
  env: Env,
  progress: MoveProgress,
  saved: (progress: MoveProgress) => Promise<void>,
): Promise<MoveProgress> {
  const dbs = databasesOf(env, progress.move);
  for (let step = await undoStep(dbs, progress); step; step = await undoStep(dbs, step)) {
    progress = step;
    await saved(step);
  }
  const state = progress.outcome?.state ?? "cancelled";
  await finish(dbs, progress, state, progress.outcome?.error ?? null);
  return { ...progress, phase: "done" };
}

/** Whether the directory already names the move's target (a move that has switched). */
export async function hasSwitched(env: Env, progress: MoveProgress): Promise<boolean> {
  return (
    (await directoryDatabase(databasesOf(env, progress.move), progress.move.org_id)) === progress.move.to
  );
}

async function recordProgress(dbs: Databases, progress: MoveProgress): Promise<void> {
  await dbs.directory
    .update(orgMoves)
    .set({ rowsCopied: progress.rowsCopied, updatedAt: nowIso() })
    .where(eq(orgMoves.id, progress.move.id))
    .run();
}

async function finish(
  dbs: Databases,
  progress: MoveProgress,
  state: "completed" | "cancelled" | "failed",
  error: string | null,
): Promise<void> {
  const now = nowIso();
  await dbs.directory
    .update(orgMoves)
    .set({ state, error, rowsCopied: progress.rowsCopied, updatedAt: now, finishedAt: now })
    .where(eq(orgMoves.id, progress.move.id))
    .run();
}
