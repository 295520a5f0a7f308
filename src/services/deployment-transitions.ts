/**
 * Deployment transitions (SPEC.md "Deployment", API_CONTRACT §8, §9): the one write path of a
 * user's cancel and of the engine's reports. The legal moves are the pure state machine of
 * deployment-state.ts; here they are applied to a row with optimistic concurrency, and the
 * `deployment.*` event of a move is written in the same transaction and published after it.
 */
import { and, eq } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../context";
import { type DeploymentData, type DeploymentStatus, deployments } from "../db/schema";
import { badInput, conflict, notFound } from "../http/errors";
import type { DeploymentRecord } from "../schemas/deployment";
import type { EventType } from "../schemas/event-types";
import { loadScoped } from "./access";
import { isFinal, planTransition } from "./deployment-state";
import { type DeploymentRow, toDeploymentRecord } from "./deployments";
import { type NewEvent, newEvent } from "./events";

export type StackReport = { id: string; status: DeploymentStatus; status_reason?: string | null | undefined };

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

function applyStackReports(
  data: DeploymentData,
  to: DeploymentStatus,
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
  const byId = new Map(reports.map((r) => [r.id, r]));
  return current.map((stack) => {
    const report = byId.get(stack.id);
    let status = report?.status ?? stack.status;
    // Cancelling the deployment cancels every stack that has not finished.
    if (to === "cancelled" && !isFinal(status)) status = "cancelled";
    if (!report && status === stack.status) return stack;
    const plan = planTransition(stack.status, status, now, `Stack ${stack.id}`);
    const next: StackEntry = {
      id: stack.id,
      status,
      timestamp: plan.kind === "move" ? now : stack.timestamp,
    };
    // As for resources: a reason left out survives only while the status stays; null clears it.
    const reason =
      report?.status_reason === undefined
        ? plan.kind === "stay"
          ? stack.status_reason
          : undefined
        : (report.status_reason ?? undefined);
    if (reason !== undefined) next.status_reason = reason;
    return next;
  });
}

/**
 * Runs in the same batch (one transaction) right after the conditional UPDATE; `changes()`
 * is that UPDATE's row count, so the event is written exactly when the transition is.
 */
const INSERT_EVENT_IF_CHANGED = `INSERT INTO events (id, project_id, type, data, enqueued_at, created_at)
  SELECT ?1, ?2, ?3, ?4, NULL, ?5 WHERE changes() = 1`;

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
  const { db } = ctx;
  // One instant for the whole transition, so started_at/finished_at equal updated_at.
  const now = nextVersion(row.updatedAt);
  const stackList = applyStackReports(row.data, to, reports, now);
  const plan = planTransition(row.status, to, now);
  const data: DeploymentData = { ...row.data };
  if (stackList) data.stacks = stackList;
  const next: DeploymentRow = {
    ...row,
    data,
    status: plan.kind === "move" ? plan.status : row.status,
    startedAt: plan.kind === "move" && plan.startedAt ? plan.startedAt : row.startedAt,
    finishedAt: plan.kind === "move" && plan.finishedAt ? plan.finishedAt : row.finishedAt,
    updatedAt: now,
  };
  const deployment = toDeploymentRecord(next);
  const update = db
    .update(deployments)
    .set({
      data: next.data,
      status: next.status,
      startedAt: next.startedAt,
      finishedAt: next.finishedAt,
      updatedAt: next.updatedAt,
    })
    .where(
      and(
        eq(deployments.id, row.id),
        eq(deployments.status, row.status),
        eq(deployments.updatedAt, row.updatedAt),
      ),
    );
  const type = plan.kind === "move" ? EVENT_OF[plan.status] : undefined;
  const event = type ? newEvent(row.projectId, type, { deployment }) : undefined;
  // Straight to D1's batch: Drizzle's batch cannot bind parameters of a raw statement.
  const d1 = db.$client;
  const built = update.toSQL();
  const statements = [d1.prepare(built.sql).bind(...built.params)];
  if (event) {
    statements.push(
      d1
        .prepare(INSERT_EVENT_IF_CHANGED)
        .bind(event.id, event.projectId, event.type, JSON.stringify(event.data), event.createdAt),
    );
  }
  const [updated] = await d1.batch(statements);
  if (updated?.meta.changes !== 1) {
    throw conflict("The deployment changed while this request was applied; read it again.");
  }
  return event ? { deployment, event } : { deployment };
}

/** User: cancel a `queued` or `in_progress` deployment (needs `contributor`). */
export async function cancelDeployment(ctx: CallerContext, id: string): Promise<DeploymentRecord> {
  const { db, identity } = ctx;
  const { row } = await loadScoped(db, identity, deployments, id, "write", "Deployment");
  if (isFinal(row.status)) {
    throw conflict(
      `The deployment is already \`${row.status}\`; only a queued or running one can be cancelled.`,
    );
  }
  return (await transitionDeployment(ctx, row, "cancelled")).deployment;
}

/**
 * Engine: report the deployment's status and, optionally, its stacks'. The event, committed
 * with the transition, is published without holding up the engine.
 */
export async function updateDeploymentStatus(
  ctx: ServiceContext,
  id: string,
  to: DeploymentStatus,
  reports: readonly StackReport[] = [],
): Promise<DeploymentRecord> {
  const { db } = ctx;
  const row = await db.select().from(deployments).where(eq(deployments.id, id)).get();
  if (!row) throw notFound("Deployment");
  const { deployment, event } = await transitionDeployment(ctx, row, to, reports);
  if (event) ctx.events.publishAfterCommit(event.id);
  return deployment;
}
