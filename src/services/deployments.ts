/** Deployments (SPEC.md "Deployment", API_CONTRACT §3, §4, §8): read and cancelled by users, run by the engine. */

import type { z } from "@hono/zod-openapi";
import { and, eq, getTableColumns, inArray } from "drizzle-orm";
import type { CallerContext, Identity, ServiceContext } from "../context";
import type { Db } from "../db/client";
import { keyset, listPage, type Page, type PageRequest, toPage } from "../db/pagination";
import {
  type DeploymentData,
  type DeploymentStatus,
  deploymentStacks,
  deployments,
  environments,
  projectMembers,
  projects,
  stacks,
} from "../db/schema";
import { badInput, conflict, isForeignKeyViolation, notFound } from "../http/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type { DeploymentDataSchema, DeploymentRecord } from "../schemas/deployment";
import type { EventType } from "../schemas/event-types";
import { canSeeAll, loadScoped } from "./access";
import { isFinal, planTransition } from "./deployment-state";
import { type NewEvent, newEvent } from "./events";

/**
 * `data` as the API describes it. The column's own type is looser (plain strings for the
 * enums); the zod schema that validated it on the way in is the authority on its shape.
 */
export type DeploymentDataRecord = z.output<typeof DeploymentDataSchema>;

type DeploymentRow = typeof deployments.$inferSelect;

export function toDeploymentRecord(row: DeploymentRow): DeploymentRecord {
  return {
    id: row.id,
    environment_id: row.environmentId,
    stack_ids: row.stackIds,
    status: row.status,
    data: row.data as DeploymentDataRecord,
    started_at: row.startedAt,
    finished_at: row.finishedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The canonical filter key a cursor is bound to: the status set, sorted and unique. */
export function statusFilterKey(statuses: readonly DeploymentStatus[] | undefined): string {
  if (!statuses?.length) return "";
  return `status=${[...new Set(statuses)].sort().join(",")}`;
}

export type ListFilter = { statuses?: readonly DeploymentStatus[] | undefined };

const statusIn = (filter: ListFilter) =>
  filter.statuses?.length ? inArray(deployments.status, [...new Set(filter.statuses)]) : undefined;

export async function getDeployment(
  ctx: CallerContext,
  id: string,
  environmentId?: string,
): Promise<DeploymentRecord> {
  const { db, identity } = ctx;
  const extra = environmentId ? eq(deployments.environmentId, environmentId) : undefined;
  const { row } = await loadScoped(db, identity, deployments, id, "read", "Deployment", extra);
  return toDeploymentRecord(row);
}

/**
 * The org-wide list's query. It walks the (org_id, created_at, id) index in order, so a page
 * costs the same at any depth; an org member sees only the projects it belongs to (a filter on
 * that walk). Separate from its execution so its query plan can be tested.
 */
export function visibleDeploymentsQuery(db: Db, identity: Identity, filter: ListFilter, page: PageRequest) {
  const { where, orderBy } = keyset({ createdAt: deployments.createdAt, id: deployments.id }, page);
  const memberOnly = canSeeAll(identity)
    ? undefined
    : inArray(
        deployments.projectId,
        db
          .select({ id: projectMembers.projectId })
          .from(projectMembers)
          .where(eq(projectMembers.accountId, identity.accountId)),
      );
  return db
    .select()
    .from(deployments)
    .where(and(eq(deployments.orgId, identity.orgId), memberOnly, statusIn(filter), where))
    .orderBy(...orderBy)
    .limit(page.limit + 1);
}

/** Every project the caller may see: org owner/admin all of the organization's, others their own. */
export async function listVisibleDeployments(
  ctx: CallerContext,
  filter: ListFilter,
  page: PageRequest,
): Promise<Page<DeploymentRecord>> {
  const { db, identity } = ctx;
  const rows = await visibleDeploymentsQuery(db, identity, filter, page).all();
  return toPage(rows, page, (r) => ({ createdAt: r.createdAt, id: r.id }), toDeploymentRecord);
}

export async function listEnvironmentDeployments(
  ctx: CallerContext,
  environmentId: string,
  filter: ListFilter,
  page: PageRequest,
): Promise<Page<DeploymentRecord>> {
  const { db, identity } = ctx;
  await loadScoped(db, identity, environments, environmentId, "read", "Environment");
  const scope = and(eq(deployments.environmentId, environmentId), statusIn(filter));
  return listPage(db, deployments, scope, page, toDeploymentRecord);
}

export async function listStackDeployments(
  ctx: CallerContext,
  stackId: string,
  filter: ListFilter,
  page: PageRequest,
): Promise<Page<DeploymentRecord>> {
  const { db, identity } = ctx;
  await loadScoped(db, identity, stacks, stackId, "read", "Stack");
  // The (stack_id, created_at, deployment_id) index of deployment_stacks carries the order.
  const { where, orderBy } = keyset(
    { createdAt: deploymentStacks.createdAt, id: deploymentStacks.deploymentId },
    page,
  );
  const rows = await db
    .select(getTableColumns(deployments))
    .from(deploymentStacks)
    .innerJoin(deployments, eq(deployments.id, deploymentStacks.deploymentId))
    .where(and(eq(deploymentStacks.stackId, stackId), statusIn(filter), where))
    .orderBy(...orderBy)
    .limit(page.limit + 1)
    .all();
  return toPage(rows, page, (r) => ({ createdAt: r.createdAt, id: r.id }), toDeploymentRecord);
}

export type DeploymentCreateInput = {
  stack_ids: string[];
  data: Pick<DeploymentDataRecord, "patch" | "source">;
};

const STACK_LINKS_PER_INSERT = 33;

/** Engine: a new `queued` deployment of stacks of one environment. */
export async function createDeployment(
  ctx: ServiceContext,
  environmentId: string,
  input: DeploymentCreateInput,
): Promise<DeploymentRecord> {
  const { db } = ctx;
  const [env, found] = await db.batch([
    db
      .select({ projectId: environments.projectId, orgId: projects.orgId })
      .from(environments)
      .innerJoin(projects, eq(projects.id, environments.projectId))
      .where(eq(environments.id, environmentId)),
    db
      .select({ id: stacks.id, environmentId: stacks.environmentId })
      .from(stacks)
      .where(inArray(stacks.id, input.stack_ids)),
  ]);
  const environment = env[0];
  if (!environment) throw notFound("Environment");
  const ours = new Set(found.filter((s) => s.environmentId === environmentId).map((s) => s.id));
  const foreign = input.stack_ids.flatMap((id, i) =>
    ours.has(id) ? [] : [{ path: `stack_ids.${i}`, message: "Not a stack of this environment." }],
  );
  if (foreign.length) throw badInput("Every stack must belong to the environment.", foreign);

  const now = nowIso();
  const data: DeploymentData = { patch: input.data.patch };
  if (input.data.source !== undefined) data.source = input.data.source;
  data.stacks = input.stack_ids.map((id) => ({ id, status: "queued", timestamp: now }));
  const row: DeploymentRow = {
    id: newId(),
    projectId: environment.projectId,
    orgId: environment.orgId,
    environmentId,
    stackIds: input.stack_ids,
    data,
    status: "queued",
    startedAt: null,
    finishedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  try {
    // D1 binds at most 100 parameters per statement and a deployment_stacks row binds 3:
    // the links go in slices, all in the one batch (one transaction).
    const links = input.stack_ids.map((stackId) => ({ deploymentId: row.id, stackId, createdAt: now }));
    const linkInserts = [];
    for (let i = 0; i < links.length; i += STACK_LINKS_PER_INSERT) {
      linkInserts.push(db.insert(deploymentStacks).values(links.slice(i, i + STACK_LINKS_PER_INSERT)));
    }
    await db.batch([db.insert(deployments).values(row), ...linkInserts]);
  } catch (err) {
    // A stack or the environment was deleted between the check and the write.
    if (isForeignKeyViolation(err)) {
      throw conflict("The environment or one of its stacks was deleted while the deployment was created.");
    }
    throw err;
  }
  return toDeploymentRecord(row);
}

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
