/**
 * `OrgMove`: one Durable Object per move of an organization to another database (API_CONTRACT
 * §32), named by the move's id. It runs the move from its alarm, a few seconds at a time, and keeps
 * its progress (src/services/moves/progress.ts `MoveProgress`) in its storage after every step, so a
 * crash anywhere (of the object, the Worker, the machine) resumes where the last step ended, and
 * the directory's record of the move (which every read answers from) follows it.
 *
 * A run and a cancel never overlap: both go through `exclusive`, so a cancel waits for the step in
 * progress and then either undoes a move that has not switched, or finds it switching and refuses.
 * A failing run is retried with a growing delay; before the switch, MOVE_ATTEMPTS failures in a
 * row fail the move (undone: the organization stays whole where it was); after it, a move only
 * goes forward. The cron wakes the object of a move whose record has stopped changing.
 */
import { DurableObject } from "cloudflare:workers";
import { createServiceContext } from "../context";
import { loggableError } from "../errors";
import { newId } from "../lib/ids";
import { createLogger } from "../lib/log";
import { loadedOnce } from "../lib/once";
import type { MoveRecord } from "../schemas/move";

/** How long one alarm works before it lets a cancel (or anything else) in. */
const RUN_MS = 3_000;
/** The wait after a first failed run, doubled after each next one, up to MAX_BACKOFF_MS. */
const RETRY_BASE_MS = 500;
/** The longest wait between two failed runs. */
const MAX_BACKOFF_MS = 60_000;

type Progress = import("../services/moves/run").MoveProgress;
type CancelRequest = import("../services/moves/progress").CancelRequest;

/**
 * What runs a move, loaded when a move first reaches this isolate's object, not when the Worker
 * starts (the class is in every isolate's entry); kept once loaded (test/setup.ts loads them first).
 */
export const loadMoveRun = loadedOnce(() => import("../services/moves/run"));
export const loadMoveRemove = loadedOnce(() => import("../services/moves/remove"));
export const loadMoves = loadedOnce(() => import("../services/moves/moves"));

export class OrgMove extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();
  /** A cancel is waiting: the run in progress stops after its current step. */
  private cancelling = 0;

  /** Runs `work` after everything already queued here, never beside it. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private load(): Promise<Progress | undefined> {
    return this.ctx.storage.get<Progress>("progress");
  }

  private save(progress: Progress): Promise<void> {
    return this.ctx.storage.put("progress", progress);
  }

  /** Starts the move (or, for one already started, makes sure it runs). */
  async start(move: MoveRecord): Promise<void> {
    await this.exclusive(async () => {
      const { startProgress } = await loadMoveRun();
      const progress = await this.load();
      if (!progress) await this.save(startProgress(move));
      if (progress?.phase === "done") return;
      if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now());
    });
  }

  /**
   * Cancels the move if it has not begun to switch: its copy is removed before this returns, and
   * the record it returns reads `cancelled`, with `cancelled: true`. Otherwise the record as it
   * stands, with `cancelled: false` (a move another cancel stopped first included: cancels run
   * one at a time, so of cancels sent at once exactly one stops it).
   */
  async cancel(move: MoveRecord, by: CancelRequest): Promise<{ move: MoveRecord; cancelled: boolean }> {
    this.cancelling++;
    return this.exclusive(async () => {
      this.cancelling--;
      const { startProgress, undoMove, hasSwitched } = await loadMoveRun();
      const { REMOVE_START } = await loadMoveRemove();
      const { getMove } = await loadMoves();
      const ctx = createServiceContext({ env: this.env, requestId: newId() });
      const current = await getMove(ctx, move.id);
      const progress = (await this.load()) ?? startProgress(move);
      if (
        current.state !== "copying" ||
        progress.phase === "done" ||
        (await hasSwitched(this.env, progress))
      ) {
        return { move: current, cancelled: false };
      }
      const undoing: Progress = {
        ...progress,
        phase: "undo",
        removal: REMOVE_START,
        outcome: { state: "cancelled", error: null, by },
      };
      await this.save(undoing);
      const pace = msOf(this.env, "MOVE_PACE");
      await this.save(await undoMove(this.env, undoing, (step) => this.save(step), pace));
      await this.ctx.storage.deleteAlarm();
      return { move: await getMove(ctx, move.id), cancelled: true };
    });
  }

  override async alarm(): Promise<void> {
    await this.exclusive(async () => {
      const progress = await this.load();
      if (!progress || progress.phase === "done") return;
      const { runMove, hasSwitched, MOVE_ATTEMPTS, MOVE_SETTLE_MS } = await loadMoveRun();
      let latest = progress;
      try {
        const run = {
          deadline: Date.now() + RUN_MS,
          settleMs: msOf(this.env, "MOVE_SETTLE_MS") ?? MOVE_SETTLE_MS,
          interrupted: () => this.cancelling > 0,
          pace: msOf(this.env, "MOVE_PACE"),
        };
        const { progress: next, at } = await runMove(this.env, progress, run, async (step) => {
          latest = step;
          await this.save(step);
        });
        await this.save({ ...next, failures: 0 });
        if (at !== null) await this.ctx.storage.setAlarm(at);
      } catch (err) {
        const failures = latest.failures + 1;
        const log = createLogger({ move_id: progress.move.id, org_id: progress.move.org_id });
        log.error("move run failed; retried", { phase: latest.phase, failures, error: loggableError(err) });
        let next: Progress = { ...latest, failures };
        const early = latest.phase === "copy" || latest.phase === "catchup";
        if (early && failures >= MOVE_ATTEMPTS && !(await hasSwitched(this.env, latest).catch(() => true))) {
          next = {
            ...latest,
            phase: "undo",
            removal: { step: 0, projects: null, project: 0 },
            failures: 0,
            outcome: { state: "failed", error: loggableError(err) },
          };
        }
        await this.save(next);
        const base = msOf(this.env, "MOVE_RETRY_MS") ?? RETRY_BASE_MS;
        await this.ctx.storage.setAlarm(Date.now() + Math.min(MAX_BACKOFF_MS, base * 2 ** failures));
      }
    });
  }
}

/**
 * MOVE_SETTLE_MS (local development and the tests set it: see .dev.vars.example) or MOVE_RETRY_MS
 * (the tests only, so that a failing move fails in moments): milliseconds; MOVE_PACE (the tests: 0,
 * no pause between steps): a multiple of a step's time (./services/moves/run.ts).
 */
function msOf(env: Env, name: "MOVE_SETTLE_MS" | "MOVE_RETRY_MS" | "MOVE_PACE"): number | undefined {
  const raw = (env as Env & Record<string, string | undefined>)[name];
  const value = raw ? Number(raw) : Number.NaN;
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
