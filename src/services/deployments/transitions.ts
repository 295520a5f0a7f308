/**
 * Deployment transitions (SPEC.md "Deployment", API_CONTRACT §8, §9): the one write path of a
 * user's cancel and of the engine's reports. The legal moves are the pure state machine of
 * ./state.ts; here they are applied to a row with optimistic concurrency, and the
 * `deployment.*` event of a move is written in the same transaction and published after it.
 */
import { and, eq } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { EventType } from "../../db/event-types";
import { type DeploymentStatus, deployments } from "../../db/schema";
import { ApiError, conflict, notFound } from "../../errors";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { DeploymentUpdateInput } from "../../schemas/deployment-writes";
import { loadAuthorized } from "../access";
import { auditEntry } from "../audit/entry";
import { engineMayStart, whyNotStart } from "./gate-rules";
import { auditableDeploymentChanges, type DeploymentRow, toDeploymentRecord } from "./record";
import { isFinal } from "./state";
import { notifyFollowers, recordedEntries, statusEntriesInsert } from "./timeline";
import { plannedTransition, type StackReport, transitionedColumns } from "./transition-plan";

export { MAX_DEPLOYMENT_DATA_BYTES } from "./record";

import { publishAfterCommit } from "../events/queue";
import { eventInsert, type NewEvent, newEvent } from "../events/write";
import { type IfMatchGuard, ifMatchGuard, writeLatest } from "../preconditions";

export type { StackReport } from "./transition-plan";

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
        starting ? engineMayStart(row) : undefined,
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
      const why = await whyNotStart(ctx, row);
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
