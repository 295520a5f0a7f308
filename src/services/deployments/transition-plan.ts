/**
 * What a deployment's transition writes (./transitions.ts), planned from the row as read: the row
 * it leaves, its stacks after the engine's reports and the roll-up of a final move, and its
 * timeline entries. Pure: the step that makes the move writes it in its own batch (a cancel, the
 * engine's reports; a failed check's cancel, ./checks.ts and ./gate.ts).
 */
import type { DeploymentData, DeploymentStatus } from "../../db/schema";
import { ApiError, badInput } from "../../errors";
import type { DeploymentUpdateInput } from "../../schemas/deployment-writes";
import { type DeploymentRow, refuseOversizedDeployment } from "./record";
import { isFinal, planStackTransition, planTransition } from "./state";
import { statusEntriesOf } from "./timeline";

/** The engine's report of one stack (`internalUpdateDeployment`'s `stacks`). */
export type StackReport = NonNullable<DeploymentUpdateInput["stacks"]>[number];

type StackEntry = NonNullable<DeploymentData["stacks"]>[number];

/**
 * The stacks after the engine's reports (each checked against the stack machine), and then,
 * when the deployment enters a final status, every stack not yet final takes that status
 * (API_CONTRACT §17), so `data.stacks` never shows `queued` under a finished deployment. A
 * report that names that same status for an unfinished stack is the roll-up itself.
 */
function applyStackReports(
  data: DeploymentData,
  entering: DeploymentStatus | undefined,
  reports: readonly StackReport[],
  now: string,
): DeploymentData["stacks"] {
  const current = data.stacks ?? [];
  const known = new Set(current.map((s) => s.id));
  const unknown = reports.flatMap((r, i) =>
    known.has(r.id) ? [] : [{ path: `stacks.${i}.id`, message: "Not a stack of this deployment." }],
  );
  if (unknown.length) throw badInput("Every stack must be a stack of the deployment.", unknown);
  if (!data.stacks) return undefined;
  const finalTo = entering && isFinal(entering) ? entering : undefined;
  const byId = new Map(reports.map((r) => [r.id, r]));
  return current.map((stack) => {
    const report = byId.get(stack.id);
    const reported = report?.status ?? stack.status;
    // A report naming the very status the deployment's final move gives every unfinished stack
    // (`succeeded` for a `queued` one, which the stack machine alone would refuse) is that
    // roll-up, with its reason: an engine may finish a deployment and its stacks in one report.
    const rolledUp = report !== undefined && reported === finalTo && !isFinal(stack.status);
    const plan =
      report && !rolledUp ? planStackTransition(stack.status, reported, now, `Stack ${stack.id}`) : undefined;
    const status = finalTo && !isFinal(reported) ? finalTo : reported;
    if (!report && status === stack.status) return stack;
    const moved = status !== stack.status || plan?.kind === "move";
    const next: StackEntry = { id: stack.id, status, timestamp: moved ? now : stack.timestamp };
    // As for resources: a reason left out survives only while the status stays; null clears it.
    const reason =
      report?.status_reason === undefined
        ? moved
          ? undefined
          : stack.status_reason
        : (report.status_reason ?? undefined);
    if (reason !== undefined) next.status_reason = reason;
    return next;
  });
}

/**
 * The row a move to `to` (with the engine's stack reports) leaves, at `now`, and its timeline
 * entries (`reason` on the deployment's own): what a transition writes, for the batch of the step
 * that makes it (`tryTransition`; a failed check's cancel, `plannedCancel`). Throws `400` for an
 * illegal stack report or a deployment grown too large.
 */
export function plannedTransition(
  row: DeploymentRow,
  to: DeploymentStatus,
  reports: readonly StackReport[],
  now: string,
  reason: string | null,
) {
  const plan = planTransition(row.status, to, now);
  const stackList = applyStackReports(row.data, plan.kind === "move" ? plan.status : undefined, reports, now);
  const data: DeploymentData = { ...row.data };
  if (stackList) data.stacks = stackList;
  if (stackList) refuseOversizedDeployment(data, row.stackIds, "stacks");
  const next: DeploymentRow = {
    ...row,
    data,
    status: plan.kind === "move" ? plan.status : row.status,
    startedAt: plan.kind === "move" && plan.startedAt ? plan.startedAt : row.startedAt,
    finishedAt: plan.kind === "move" && plan.finishedAt ? plan.finishedAt : row.finishedAt,
    updatedAt: now,
    // A deployment that leaves `waiting` (cancelled) is held by nothing any more (§26).
    gate:
      row.status === "waiting" && row.gate && plan.kind === "move"
        ? { ...row.gate, blocked_by: [] }
        : row.gate,
  };
  const entries = statusEntriesOf(row, next).map((e) =>
    e.stackId === null && reason !== null ? { ...e, statusReason: reason } : e,
  );
  return { plan, next, entries };
}

/**
 * The cancel that a step decides at once and writes in its own batch (a failed check's, by its
 * conclusion or its timeout: ./checks.ts, ./gate.ts), planned over the row as that step leaves it;
 * undefined when it cannot be (a deployment at its size bound): the step then writes without it and
 * cancels after, as a consequence (`cancelAsConsequence`), or leaves it to the cron.
 */
export function plannedCancel(row: DeploymentRow, now: string, reason: string) {
  try {
    return plannedTransition(row, "cancelled", [], now, reason);
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

/** The columns a transition sets, from the row it leaves. */
export const transitionedColumns = (next: DeploymentRow) => ({
  data: next.data,
  status: next.status,
  startedAt: next.startedAt,
  finishedAt: next.finishedAt,
  updatedAt: next.updatedAt,
  gate: next.gate,
});
