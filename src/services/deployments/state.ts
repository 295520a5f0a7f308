/**
 * The deployment state machine (API_CONTRACT §3 "Deployment"), as pure functions so that
 * cancel, the engine's status updates and the per-stack statuses all follow one rule:
 *
 *   queued → in_progress → succeeded | failed
 *   queued | in_progress → cancelled
 *   waiting → queued | cancelled          (§26: held by its environment's protection)
 *
 * A stack inside a deployment (API_CONTRACT §17) can also fail before it starts:
 *
 *   queued → in_progress | failed | cancelled
 *   in_progress → succeeded | failed | cancelled
 *
 * and when the deployment enters a final status, every stack not yet final takes it.
 *
 * A final status never changes again. Staying in a non-final status is allowed (it is how
 * the engine reports progress of single stacks while the deployment keeps its status) and
 * moves no timestamp.
 */
import { type DeploymentStatus, FINAL_DEPLOYMENT_STATUSES } from "../../db/schema";
import { conflict } from "../../errors";

export const FINAL_STATUSES = FINAL_DEPLOYMENT_STATUSES;

const NEXT: Record<DeploymentStatus, readonly DeploymentStatus[]> = {
  // API_CONTRACT §26: only its gate's release (never the engine) moves it on; cancel stops it.
  waiting: ["queued", "cancelled"],
  queued: ["in_progress", "cancelled"],
  in_progress: ["succeeded", "failed", "cancelled"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

const STACK_NEXT: Record<DeploymentStatus, readonly DeploymentStatus[]> = {
  // A stack is never `waiting`: a waiting deployment's stacks stay `queued`.
  waiting: [],
  queued: ["in_progress", "failed", "cancelled"],
  in_progress: ["succeeded", "failed", "cancelled"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export function isFinal(status: DeploymentStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

/** A real move to another status (not a stay). */
export function canMove(from: DeploymentStatus, to: DeploymentStatus, table = NEXT): boolean {
  return table[from].includes(to);
}

export type TransitionPlan =
  | { kind: "stay" }
  | {
      kind: "move";
      status: DeploymentStatus;
      /** Set when entering `in_progress`. */
      startedAt?: string;
      /** Set when entering a final status. */
      finishedAt?: string;
    };

/**
 * What moving `from` → `to` at time `now` changes, or `409 conflict` if the machine forbids it.
 * `what` names the subject in the error message ("The deployment", "Stack <id>").
 */
export function planTransition(
  from: DeploymentStatus,
  to: DeploymentStatus,
  now: string,
  what = "The deployment",
  table = NEXT,
): TransitionPlan {
  if (from === to && !isFinal(from)) return { kind: "stay" };
  if (!canMove(from, to, table)) {
    throw conflict(`${what} cannot move from \`${from}\` to \`${to}\`.`, { from, to });
  }
  const plan: TransitionPlan = { kind: "move", status: to };
  if (to === "in_progress") plan.startedAt = now;
  if (isFinal(to)) plan.finishedAt = now;
  return plan;
}

/** As `planTransition`, under the stack machine. */
export function planStackTransition(
  from: DeploymentStatus,
  to: DeploymentStatus,
  now: string,
  what: string,
): TransitionPlan {
  return planTransition(from, to, now, what, STACK_NEXT);
}
