/**
 * The steps of one move (API_CONTRACT §32), as its object (src/org-move/object.ts) runs them from
 * its alarm: each takes the move's progress, does a bounded piece of work, and returns the
 * progress after it, which the object stores before the next. Every step can be run again after a
 * crash at any point of it and comes to the same result (./copy.ts's and ./remove.ts's writes are
 * upserts and deletes by key; the switch, ./switch.ts, reads where the directory says the
 * organization is before it acts). What the object keeps: ./progress.ts. The order of the whole,
 * and why: ./moves.ts.
 */
import { and, eq, sql } from "drizzle-orm";
import { createServiceContext } from "../../context";
import { DIRECTORY } from "../../db/databases";
import { movingOrgs, orgLimits, orgMoves } from "../../db/schema";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { MoveRecord } from "../../schemas/move";
import { COPY_START, copyChunk } from "./copy";
import { type Databases, type MoveProgress, moveEntry, unreachableLimits } from "./progress";
import { REMOVE_START, removeChunk } from "./remove";
import { catchUpOrSwitch, directoryDatabase, SWITCH_BUDGET_MS } from "./switch";

export type { MovePhase, MoveProgress } from "./progress";
export { SWITCH_BUDGET_MS } from "./switch";

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

/** Runs that fail in a row before a move that has not switched fails (and is undone). */
export const MOVE_ATTEMPTS = 5;
/** How long a switched move waits before it removes the organization from its old database. */
export const MOVE_SETTLE_MS = 35_000;
/** A pause after each step of a move, as a multiple of the step's time: 1 leaves half of the time to others. */
export const MOVE_PACE = 1;
/** The longest pause between two steps. */
const MAX_PAUSE_MS = 200;

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
 * progress and when to run again (null: it is finished). `switchBudgetMs`: how long the switch may
 * hold the organization's writes (SWITCH_BUDGET_MS; the tests shorten it).
 */
export async function runMove(
  env: Env,
  progress: MoveProgress,
  run: {
    deadline: number;
    settleMs: number;
    interrupted: () => boolean;
    pace?: number;
    switchBudgetMs?: number;
  },
  saved: (progress: MoveProgress) => Promise<void>,
): Promise<{ progress: MoveProgress; at: number | null }> {
  const dbs = databasesOf(env, progress.move);
  const { deadline, settleMs, interrupted, pace = MOVE_PACE, switchBudgetMs = SWITCH_BUDGET_MS } = run;
  // A run cut short at the switch may have recorded rows that its saved progress does not count
  // (the last changes it applied, which no later round applies again: ./switch.ts): the run counts
  // on from the record then, so `rows_copied` never reads less than it did.
  const record = await dbs.directory
    .select({ rowsCopied: orgMoves.rowsCopied })
    .from(orgMoves)
    .where(eq(orgMoves.id, progress.move.id))
    .get();
  let recorded = record?.rowsCopied ?? progress.rowsCopied;
  let current = recorded > progress.rowsCopied ? { ...progress, rowsCopied: recorded } : progress;
  let began = Date.now();
  for (let first = true; Date.now() < deadline && !interrupted(); first = false) {
    if (!first) {
      await saved(current);
      // `rows_copied` as the move's record reads it: the rows copied so far (§32), after each step
      // that copied some, once the object holds the progress that counted them (a run cut short
      // resumes from that progress, or from the record where the switch counted more: above).
      if (current.rowsCopied !== recorded) {
        await recordProgress(dbs, current);
        recorded = current.rowsCopied;
      }
      began = await shareAfter(began, pace);
    }
    switch (current.phase) {
      case "copy":
        current = await copy(dbs, current);
        break;
      case "catchup": {
        const next = await catchUpOrSwitch(dbs, current, switchBudgetMs);
        if ("later" in next) {
          // Its count is recorded (with the fence lifted): the object keeps it for the next run.
          return { progress: next.later, at: Date.now() + 2_000 };
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
        // The fence stays until the rows are gone, each step of the removal lifting it for itself
        // alone (./remove.ts): a write still sent here is refused, not taken and then removed.
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
        await endUndo(dbs, current, "failed");
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
    // Without the source's capture of changes (its request cut short between its two records), a
    // write made while the copy runs would be lost at the switch, and no fence would hold the
    // organization: the move fails, undone, with nothing copied.
    const capture = await dbs.source
      .select({ moveId: movingOrgs.moveId })
      .from(movingOrgs)
      .where(and(eq(movingOrgs.orgId, move.org_id), eq(movingOrgs.moveId, move.id)))
      .get();
    if (!capture) throw new Error("the move's capture of changes was never recorded in its source");
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

/**
 * The move's share of the databases it works on: after a step begun at `began`, a pause as long as
 * `pace` times the step took (at most MAX_PAUSE_MS), so the organizations it shares them with, and
 * the isolate's other work, are never kept waiting behind a run of its statements. Returns when the
 * next step begins.
 */
async function shareAfter(began: number, pace: number): Promise<number> {
  const pause = Math.min(MAX_PAUSE_MS, (Date.now() - began) * pace);
  if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  return Date.now();
}

/**
 * Undoes a move that has not switched at once (a cancel), as its runs would, sharing the databases
 * as they do (`shareAfter`): run back to back, its steps held every other request of the local
 * runtime, of every organization, until the undo ended (12 s for 7,000 rows).
 */
export async function undoMove(
  env: Env,
  progress: MoveProgress,
  saved: (progress: MoveProgress) => Promise<void>,
  pace = MOVE_PACE,
): Promise<MoveProgress> {
  const dbs = databasesOf(env, progress.move);
  let began = Date.now();
  for (let step = await undoStep(dbs, progress); step; step = await undoStep(dbs, step)) {
    progress = step;
    await saved(step);
    began = await shareAfter(began, pace);
  }
  await endUndo(dbs, progress, "cancelled");
  return { ...progress, phase: "done" };
}

/**
 * The end of an undo: a cancel's `internal.cancelMove` entry (in the organization's log, where it
 * stays), then the move's final state. Written here, by the run that finishes the undo, and not by
 * the request: an undo cut short by a crash is finished by a later run of its object, entry and
 * all, and the entry is written once (its id is the move's, which no other entry of a move that is
 * undone takes: `internal.completeMove`'s is written only at a switch).
 */
async function endUndo(dbs: Databases, progress: MoveProgress, otherwise: "cancelled" | "failed") {
  const { move, outcome } = progress;
  if (outcome?.state === "cancelled" && outcome.by) {
    await moveEntry(dbs, dbs.source, move, "internal.cancelMove", outcome.by).run();
  }
  await finish(dbs, progress, outcome?.state ?? otherwise, outcome?.error ?? null);
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
