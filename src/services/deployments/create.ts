/**
 * Making a deployment (API_CONTRACT §9, §20, §23–§26): the engine's create, the API's create, and
 * the one insert every route's deployment goes through (redeploys and promotions too), with its
 * configuration, status and gate read by the insert itself.
 */
/** Deployments (SPEC.md "Deployment", API_CONTRACT §3, §4, §8): read and cancelled by users, run by the engine. */

import { asc, eq, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { CallerContext, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { bindQuery } from "../../db/compiled";
import {
  type DeploymentConfig,
  type DeploymentData,
  deploymentStacks,
  deployments,
  environments,
  projects,
  stacks,
} from "../../db/schema";
import { badInput, conflict, notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { DeploymentCreateInput, PublicDeploymentCreateInput } from "../../schemas/deployment-writes";
import { authorizedLookup } from "../access";
import { auditEntry } from "../audit/entry";
import { publishAfterCommit } from "../events/queue";
import { eventInsert, newEvent } from "../events/write";
import { lookupThen } from "../lookup";
import { currentConfig } from "./config";
import { afterCreate } from "./gate-after";
import { concurrencyOf, createdDeadlines, createdGate, createdStatus } from "./gate-rules";
import {
  auditableDeploymentChanges,
  type DeploymentRow,
  refuseOversizedDeployment,
  toDeploymentRecord,
} from "./record";
import { creationEntryInsert } from "./timeline";

const STACK_LINKS_PER_INSERT = 33;

/**
 * What a deployment is made from, beyond its request: the deployment it runs again (§20), and
 * the configuration it pins (§24): the one given (a redeploy's `pinned`), else the environment's
 * scopes as they are when it is inserted.
 */
export type MadeFrom = {
  redeployOf?: string;
  promotedFrom?: string;
  config?: DeploymentConfig;
  /**
   * Statements to commit with it, after it (a promotion's event), given its record as written
   * but for `config`, which its INSERT reads (a statement after it reads it from the row).
   */
  also?: (record: DeploymentRecord) => BatchItem<"sqlite">[];
};

/** Where a new deployment goes: its environment, resolved (with its project and organization). */
export type DeploymentPlace = { environmentId: string; projectId: string; orgId: string | null };

/** The stacks a create names (by id), for checking that each is the environment's own. */
const namedStacks = (db: Db, stackIds: readonly string[]) =>
  db
    .select({ id: stacks.id, environmentId: stacks.environmentId })
    .from(stacks)
    // One bound JSON list, not a parameter per ID (D1 binds at most 100 per statement).
    .where(sql`${stacks.id} IN (SELECT value FROM json_each(${JSON.stringify(stackIds)}))`);

/**
 * The engine's `internalCreateDeployment`: a new `queued` deployment of stacks of one environment.
 * Also how a redeploy is made (`redeployOf` set), so each gets what a deployment gets at its creation.
 */
export async function createEngineDeployment(
  ctx: ServiceContext,
  environmentId: string,
  input: DeploymentCreateInput,
  made: MadeFrom = {},
): Promise<DeploymentRecord> {
  const { db } = ctx;
  const [env, found] = await db.batch([
    db
      .select({ projectId: environments.projectId, orgId: projects.orgId })
      .from(environments)
      .innerJoin(projects, eq(projects.id, environments.projectId))
      .where(eq(environments.id, environmentId)),
    namedStacks(db, input.stack_ids),
  ]);
  const environment = env[0];
  if (!environment) throw notFound("Environment");
  return insertDeployment(ctx, { environmentId, ...environment }, input, found, made);
}

/**
 * `createDeployment` (API_CONTRACT §23): a deployment started from the API by a project
 * `contributor`, with the engine's rules; `stack_ids` left out means every stack of the
 * environment in creation order (`409` when it has none). The environment's lookup and the stacks
 * are one round trip, the write one batch.
 */
export async function createDeployment(
  ctx: CallerContext,
  environmentId: string,
  input: PublicDeploymentCreateInput,
): Promise<DeploymentRecord> {
  const { db, identity } = ctx;
  const given = input.stack_ids;
  const stackQuery =
    given === undefined
      ? db
          .select({ id: stacks.id, environmentId: stacks.environmentId })
          .from(stacks)
          .where(eq(stacks.environmentId, environmentId))
          .orderBy(asc(stacks.createdAt), asc(stacks.id))
      : namedStacks(db, given);
  const {
    found: { row },
    results: [values],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, environments, environmentId, "write", "Environment"),
    bindQuery(db, stackQuery),
  );
  const found = values.map(([id, env]) => ({ id: id as string, environmentId: env as string }));
  if (given === undefined && found.length === 0) {
    throw conflict("The environment has no stacks to deploy.", [
      { path: "stack_ids", message: "The environment has no stacks; name them, or create one first." },
    ]);
  }
  const stackIds = given ?? found.map((s) => s.id);
  const place = { environmentId, projectId: row.projectId, orgId: identity.orgId };
  return insertDeployment(ctx, place, { stack_ids: stackIds, data: input.data }, found, {});
}

/**
 * The one way a deployment is written (every route's create, redeploy and promotion): `queued`,
 * its first timeline entry, its stack links and its audit entry in one batch. `found` are the
 * stacks of `input.stack_ids` that exist (with their environment): one of another environment,
 * or none, is `400` (`409` for a redeploy's original's stack deleted since).
 */
export async function insertDeployment(
  ctx: ServiceContext,
  place: DeploymentPlace,
  input: DeploymentCreateInput,
  found: readonly { id: string; environmentId: string }[],
  made: MadeFrom,
): Promise<DeploymentRecord> {
  const { db } = ctx;
  const { environmentId } = place;
  const redeployOf = made.redeployOf ?? null;
  const ours = new Set(found.filter((s) => s.environmentId === environmentId).map((s) => s.id));
  const foreign = input.stack_ids.flatMap((id, i) =>
    ours.has(id) ? [] : [{ path: `stack_ids.${i}`, message: "Not a stack of this environment." }],
  );
  if (foreign.length && redeployOf) {
    // The original's own stacks: one deleted since is the present state, not the caller's input.
    const gone = foreign.map((issue) => ({ ...issue, message: "This stack no longer exists." }));
    throw conflict("A stack of the deployment no longer exists, so it cannot run again.", gone);
  }
  if (foreign.length) throw badInput("Every stack must belong to the environment.", foreign);

  const now = nowIso();
  const data: DeploymentData = { patch: input.data.patch };
  if (input.data.source !== undefined) data.source = input.data.source;
  data.stacks = input.stack_ids.map((id) => ({ id, status: "queued", timestamp: now }));
  refuseOversizedDeployment(data, input.stack_ids, "stack_ids");
  const row: DeploymentRow = {
    id: newId(),
    projectId: place.projectId,
    orgId: place.orgId,
    environmentId,
    stackIds: input.stack_ids,
    data,
    status: "queued",
    startedAt: null,
    finishedAt: null,
    createdAt: now,
    updatedAt: now,
    redeployOf,
    // API_CONTRACT §24: the account of the API key that made it; null for the internal API.
    createdBy: ctx.identity?.accountId ?? null,
    config: made.config ?? null,
    promotedFrom: made.promotedFrom ?? null,
    gate: null,
    checkDeadlines: null,
  };
  // D1 binds at most 100 parameters per statement and a deployment_stacks row binds 3:
  // the links go in slices, all in the one batch (one transaction). A stack or the
  // environment deleted between the check and the write: the error boundary answers 404.
  const links = input.stack_ids.map((stackId) => ({ deploymentId: row.id, stackId, createdAt: now }));
  const linkInserts = [];
  for (let i = 0; i < links.length; i += STACK_LINKS_PER_INSERT) {
    linkInserts.push(db.insert(deploymentStacks).values(links.slice(i, i + STACK_LINKS_PER_INSERT)));
  }
  // The configuration (§24), the status and the gate (§26) are read by the INSERT itself, from
  // the scopes' versions and the environment's protection as it finds them: a variable change or
  // a protection change racing this create is wholly in it or wholly not, and a create in an
  // unprotected environment reads nothing more. What only the INSERT knows, the statements after
  // it read from the row: its first timeline entry (§19: its own status; its stacks' initial
  // `queued` makes none), its audit entry's status, config and gate, a promotion's event. Its feed is not told:
  // nothing can follow a deployment before this batch commits.
  const insert = db
    .insert(deployments)
    .values({
      ...row,
      config: made.config ?? currentConfig(environmentId),
      status: createdStatus(environmentId),
      gate: createdGate(environmentId, now),
      checkDeadlines: createdDeadlines(environmentId, now),
    })
    .returning({
      config: deployments.config,
      status: deployments.status,
      gate: deployments.gate,
      checkDeadlines: deployments.checkDeadlines,
      concurrency: concurrencyOf(environmentId),
    });
  const changes = JSON.stringify(auditableDeploymentChanges(null, toDeploymentRecord(row)));
  // API_CONTRACT §31: created `waiting`, its event in the same batch, with the record as the INSERT
  // left it (its status, gate and configuration are the INSERT's own).
  const waiting = newEvent(place.projectId, "deployment.waiting", { deployment: toDeploymentRecord(row) });
  const column = (name: "status" | "gate" | "config") =>
    sql`(SELECT ${sql.identifier(name)} FROM deployments WHERE id = ${row.id})`;
  const [inserted] = await db.batch([
    insert,
    creationEntryInsert(db, row.id),
    ...linkInserts,
    ...(made.also?.(toDeploymentRecord(row)) ?? []),
    auditEntry(ctx, {
      target: { type: "deployment", id: row.id },
      projectId: row.projectId,
      orgId: place.orgId,
      changes: createdChanges(changes, row.id),
    }),
    // After the entry, which is written when the statement before it changed a row.
    eventInsert(
      db,
      waiting,
      sql`${column("status")} = 'waiting'`,
      sql`json_set(${JSON.stringify(waiting.data)}, '$.deployment.status', ${column("status")}, '$.deployment.gate', json(${column("gate")}), '$.deployment.config', json(${column("config")}))`,
    ),
  ]);
  const made_ = inserted[0];
  const record = toDeploymentRecord({
    ...row,
    config: made_?.config ?? null,
    status: made_?.status ?? row.status,
    gate: made_?.gate ?? null,
  });
  if (record.status === "waiting") publishAfterCommit(ctx, waiting.id);
  await afterCreate(ctx, record, made_?.checkDeadlines ?? null, made_?.concurrency ?? null, place.orgId);
  return record;
}

/**
 * A create's audit `changes` (API_CONTRACT §14: every non-secret top-level field; `data`, which
 * may carry configuration values, left out): `known`, what the request decided, completed from
 * the row its INSERT wrote with what only that INSERT knew: its `status`, its `config` (§24) and,
 * when its environment's protection holds it, its `gate` (§26; null to null is no change).
 */
function createdChanges(known: string, id: string): SQL {
  const column = (name: "status" | "config" | "gate") =>
    sql`(SELECT ${sql.identifier(name)} FROM deployments WHERE id = ${id})`;
  const withRow = sql`json_set(${known}, '$.status.to', ${column("status")}, '$.config', json_object('from', NULL, 'to', json(${column("config")})))`;
  return sql`CASE WHEN ${column("gate")} IS NULL THEN ${withRow} ELSE json_set(${withRow}, '$.gate', json_object('from', NULL, 'to', json(${column("gate")}))) END`;
}
