/**
 * Deployment transitions (SPEC.md "Deployment", API_CONTRACT §8, §9): the one write path of a
 * user's cancel and of the engine's reports. The legal moves are the pure state machine of
 * ./state.ts; here they are applied to a row with optimistic concurrency, and the
 * `deployment.*` event of a move is written in the same transaction and published after it.
 */
import { and, eq } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { EventType } from "../../db/event-types";
import { type DeploymentData, type DeploymentStatus, deployments } from "../../db/schema";
import { ApiError, badInput, conflict, notFound } from "../../errors";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { DeploymentUpdateInput } from "../../schemas/deployment-writes";
import { loadAuthorized } from "../access";
import { auditEntry } from "../audit/entry";
import { engineMayStart, whyNotStart } from "./gate-rules";
import {
  auditableDeploymentChanges,
  type DeploymentRow,
  refuseOversizedDeployment,
  toDeploymentRecord,
} from "./record";
import { isFinal, planStackTransition, planTransition } from "./state";
import { notifyFollowers, recordedEntries, statusEntriesInsert, statusEntriesOf } from "./timeline";

export { MAX_DEPLOYMENT_DATA_BYTES } from "./record";

import { publishAfterCommit } from "../events/queue";
import { eventInsert, type NewEvent, newEvent } from "../events/write";
import { type IfMatchGuard, ifMatchGuard, writeLatest } from "../preconditions";

/** The engine's report of one stack (`internalUpdateDeployment`'s `stacks`). */
export type StackReport = NonNullable<DeploymentUpdateInput["stacks"]>[number];

type StackEntry = NonNullable<DeploymentData["stacks"]>[number];

export type TransitionResult = { deployment: DeploymentRecord; event?: NewEvent };

const EVENT_OF: Partial<Record<DeploymentStatus, EventType>> = {
  in_progress: "deployment.in_progress",
  succeeded: "deployment.succeeded",
  failed: "deployment.failed",
};

/** Strictly later than `previous`, so every write gives the row a new version to compare against. */
function nextVersion(previous: string): string {
  const now = Date.now();
  const prev = Date.parse(previous);
  return new Date(Number.isNaN(prev) || now > prev ? now : prev + 1).toISOString();
}

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

/**
 * Moves a deployment (and optionally its stacks) to `to`: the one write path of cancel and
 * of the engine's reports. The UPDATE only applies if the row is still the version that was
 * read, so of two concurrent transitions exactly one wins; the loser is `409 conflict`.
 * The event, if the move has one, is inserted in the same batch (one transaction) and only
 * when the UPDATE changed a row, so an event exists exactly when its transition does.
 * Publishing it is the caller's (after the commit).
 */
export async function transitionDeployment(
  ctx: ServiceContext,
  row: DeploymentRow,
  to: DeploymentStatus,
  reports: readonly StackReport[] = [],
): Promise<TransitionResult> {
  const result = await tryTransition(ctx, row, to, reports);
  if (!result) throw conflict("The deployment changed while this request was applied; read it again.");
  return result;
}

/** As `transitionDeployment`, but `undefined` when the row was no longer the version read. */
async function tryTransition(
  ctx: ServiceContext,
  row: DeploymentRow,
  to: DeploymentStatus,
  reports: readonly StackReport[],
  reason: string | null = null,
  audited = true,
): Promise<TransitionResult | undefined> {
  const { db } = ctx;
  // One instant for the whole transition, so started_at/finished_at equal updated_at.
  const now = nextVersion(row.updatedAt);
  const { plan, next, entries } = plannedTransition(row, to, reports, now, reason);
  const deployment = toDeploymentRecord(next);
  const starting = plan.kind === "move" && plan.status === "in_progress";
  const update = db
    .update(deployments)
    .set(transitionedColumns(next))
    .where(
      and(
        eq(deployments.id, row.id),
        eq(deployments.status, row.status),
        eq(deployments.updatedAt, row.updatedAt),
        // §26: a start the environment's lock or concurrency forbids matches nothing (then explained).
        starting ? engineMayStart(row.environmentId, row.id) : undefined,
      ),
    );
  const type = plan.kind === "move" ? EVENT_OF[plan.status] : undefined;
  const event = type ? newEvent(row.projectId, type, { deployment }) : undefined;
  // The entry inserts exactly one row when the UPDATE changed one, so the event's
  // `changes() = 1` after it still means "the transition happened". A consequence of another change
  // (a supersede's cancels) has none: a request writes one entry, its own (the one that holds its
  // Idempotency-Key), and a wait timer's release is no request at all.
  const audit = audited
    ? auditEntry(ctx, {
        target: { type: "deployment", id: row.id },
        projectId: row.projectId,
        changes: auditableDeploymentChanges(toDeploymentRecord(row), deployment),
      })
    : undefined;
  // Its timeline entries last, written only if the update applied (`changes() = 1` after the
  // audit entry or the event, each of which inserts one row exactly when it did).
  const timeline = entries.length ? statusEntriesInsert(db, row.id, entries, now, "if-changed") : undefined;
  const results = await db.batch([
    update,
    ...(audit ? [audit] : []),
    ...(event ? [eventInsert(db, event, "if-changed")] : []),
    ...(timeline ? [timeline] : []),
  ]);
  if (!results[0].meta.changes) {
    if (starting) {
      const why = await whyNotStart(ctx, row.environmentId, row.id);
      if (why) throw conflict(`The deployment cannot start now. ${why}`);
    }
    return undefined;
  }
  const numbered = timeline ? (results[results.length - 1] as { seq: number }[]) : [];
  const recorded = numbered.length ? recordedEntries(entries, numbered, now) : [];
  if (recorded.length || next.status !== row.status) {
    notifyFollowers(ctx, row.id, recorded, next.status !== row.status ? deployment : undefined);
  }
  return event ? { deployment, event } : { deployment };
}

/**
 * Applies `to` (and the stack reports) to the deployment as it is now (`writeLatest`): a
 * transition that loses its compare-and-set to a concurrent one (the engine reporting two stacks
 * at once, a cancel racing a start) reads the deployment again and is planned anew against it,
 * so it is `409` only when the move is illegal from the state it meets (API_CONTRACT §9, §17).
 * With If-Match (`guard`) it applies to the version named or not at all: a lost compare-and-set
 * to a deployment whose ETag changed is 409 `header.if-match`. `check` runs before each attempt
 * (cancel's own message for a final one).
 */
function transitionLatest(
  ctx: ServiceContext,
  row: DeploymentRow,
  to: DeploymentStatus,
  reports: readonly StackReport[],
  opts: {
    guard: IfMatchGuard<DeploymentRow> | null;
    check?: (row: DeploymentRow) => void;
    reason?: string;
    audited?: boolean;
  },
): Promise<TransitionResult> {
  return writeLatest(
    ctx.db,
    deployments,
    row,
    (current) => tryTransition(ctx, current, to, reports, opts.reason ?? null, opts.audited ?? true),
    { ...opts, what: "Deployment" },
  );
}

/**
 * A cancel that another change decided (a `supersede`, a rejection: ./gate.ts, ./reviews.ts),
 * with `reason` on its timeline entry and no audit entry of its own (the request that caused it
 * records itself). Skipped once the deployment is no longer `queued` or `waiting` (one the engine
 * started first runs on), or is gone (deleted with its environment or project meanwhile).
 * Answers the record this cancel left, or undefined when it cancelled nothing.
 */
export async function cancelAsConsequence(
  ctx: ServiceContext,
  deployment: DeploymentRow | string,
  reason: string,
): Promise<DeploymentRecord | undefined> {
  const row =
    typeof deployment === "string"
      ? await ctx.db.select().from(deployments).where(eq(deployments.id, deployment)).get()
      : deployment;
  if (!row) return undefined;
  const moved = new Error("moved on");
  try {
    const { deployment: cancelled } = await transitionLatest(ctx, row, "cancelled", [], {
      guard: null,
      reason,
      audited: false,
      check: (current) => {
        if (current.status !== "queued" && current.status !== "waiting") throw moved;
      },
    });
    return cancelled;
  } catch (err) {
    if (err === moved || (err instanceof ApiError && err.code === "not_found")) return undefined;
    throw err;
  }
}

/**
 * User: cancel a `queued` or `in_progress` deployment (needs `contributor`). A cancel that
 * loses its compare-and-set to the engine (say `queued → in_progress`) reads the deployment
 * again and retries: it is `409` only once the deployment is final (API_CONTRACT §17).
 */
export async function cancelDeployment(ctx: CallerContext, id: string): Promise<DeploymentRecord> {
  const { row } = await loadAuthorized(ctx.db, ctx.identity, deployments, id, "write", "Deployment");
  const guard = await ifMatchGuard(ctx, row, toDeploymentRecord);
  const { deployment } = await transitionLatest(ctx, row, "cancelled", [], {
    guard,
    check: (current) => {
      if (isFinal(current.status)) {
        throw conflict(
          `The deployment is already \`${current.status}\`; only a queued or running one can be cancelled.`,
        );
      }
    },
  });
  return deployment;
}

/**
 * The engine's `internalUpdateDeployment`: the deployment's status and, optionally, its stacks', applied to the
 * deployment as it is when the report lands (reports racing each other all apply). The event,
 * committed with the transition, is published without holding up the engine.
 */
export async function updateDeployment(
  ctx: ServiceContext,
  id: string,
  input: DeploymentUpdateInput,
): Promise<DeploymentRecord> {
  const { status: to, stacks: reports = [] } = input;
  const row = await ctx.db.select().from(deployments).where(eq(deployments.id, id)).get();
  if (!row) throw notFound("Deployment");
  const guard = await ifMatchGuard(ctx, row, toDeploymentRecord);
  const { deployment, event } = await transitionLatest(ctx, row, to, reports, {
    guard,
    check: (current) => {
      // §26: only its gate releases a waiting deployment; the engine never moves it.
      if (current.status === "waiting") {
        throw conflict(
          "The deployment is `waiting` for its environment's protection: the engine cannot move it.",
        );
      }
    },
  });
  if (event) publishAfterCommit(ctx, event.id);
  return deployment;
}
