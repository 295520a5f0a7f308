/**
 * Deployments (SPEC.md "Deployment", API_CONTRACT §3, §4, §8): read and listed by users. Making one
 * is ./create.ts, moving one ./transitions.ts.
 */

import { and, eq, fillPlaceholders, getTableColumns, inArray, sql } from "drizzle-orm";
import type { CallerContext, Identity } from "../../context";
import type { Db } from "../../db/client";
import { bindCompiled, bindQuery, compiled, rowReader } from "../../db/compiled";
import { compiledKeyset, keyset, type Page, type PageRequest, pageValues, toPage } from "../../db/pagination";
import {
  type DeploymentStatus,
  deploymentStacks,
  deployments,
  environments,
  projectMembers,
  stacks,
} from "../../db/schema";
import type { DeploymentRecord } from "../../schemas/deployment";
import {
  authorizedLookup,
  callerValues,
  canSeeAll,
  loadAuthorized,
  restrictionVariant,
  withinKeyProjectsOf,
} from "../access";
import { guardedPage } from "../lookup";
import { toDeploymentRecord } from "./record";

export {
  auditableDeploymentChanges,
  type DeploymentDataRecord,
  type DeploymentRow,
  MAX_DEPLOYMENT_DATA_BYTES,
  refuseOversizedDeployment,
  toDeploymentRecord,
} from "./record";

/** The canonical filter key a cursor is bound to: the status set, sorted and unique. */
export function statusFilterKey(statuses: readonly DeploymentStatus[] | undefined): string {
  if (!statuses?.length) return "";
  return `status=${[...new Set(statuses)].sort().join(",")}`;
}

export type ListFilter = { statuses?: readonly DeploymentStatus[] | undefined };

const statusIn = (filter: ListFilter) =>
  filter.statuses?.length ? inArray(deployments.status, [...new Set(filter.statuses)]) : undefined;

export async function getDeployment(ctx: CallerContext, id: string): Promise<DeploymentRecord> {
  const { row } = await loadAuthorized(ctx.db, ctx.identity, deployments, id, "read", "Deployment");
  return toDeploymentRecord(row);
}

/** A deployment reached through an environment: one of another environment is as absent as a missing one. */
export async function getEnvironmentDeployment(
  ctx: CallerContext,
  environmentId: string,
  id: string,
): Promise<DeploymentRecord> {
  const extra = [deployments.environmentId, environmentId] as const;
  const { row } = await loadAuthorized(ctx.db, ctx.identity, deployments, id, "read", "Deployment", extra);
  return toDeploymentRecord(row);
}

const deploymentColumns = getTableColumns(deployments);
const readDeployment = rowReader(deploymentColumns);

/** The status filter's part of a compiled statement's variant (its values are constants of it). */
const statusVariant = (filter: ListFilter) =>
  filter.statuses?.length ? [...new Set(filter.statuses)].sort().join(",") : "";

/**
 * The org-wide list's query. It walks the (org_id, created_at, id) index in order, so a page
 * costs the same at any depth; an org member sees only the projects it belongs to (a filter on
 * that walk). Built once per isolate and variant (src/db/compiled.ts); `toSQL` gives its text
 * and values, so its query plan can be tested.
 */
export function visibleDeploymentsQuery(db: Db, identity: Identity, filter: ListFilter, page: PageRequest) {
  const all = canSeeAll(identity);
  const keys = compiledKeyset({ createdAt: deployments.createdAt, id: deployments.id }, page);
  const variant = `deployments:${all ? "all" : "member"}:${restrictionVariant(identity)}:${keys.variant}:${statusVariant(filter)}`;
  const query = compiled(variant, (b) =>
    b
      .select(deploymentColumns)
      .from(deployments)
      .where(
        and(
          eq(deployments.orgId, sql.placeholder("orgId")),
          withinKeyProjectsOf(identity.projectIds !== null, deployments.projectId),
          all
            ? undefined
            : inArray(
                deployments.projectId,
                b
                  .select({ id: projectMembers.projectId })
                  .from(projectMembers)
                  .where(eq(projectMembers.accountId, sql.placeholder("accountId"))),
              ),
          statusIn(filter),
          keys.where,
        ),
      )
      .orderBy(...keys.orderBy)
      .limit(keys.limit),
  );
  const values = { ...callerValues(identity), ...pageValues(page) };
  return {
    statement: () => bindCompiled(db, query, values),
    toSQL: () => ({ sql: query.sql, params: fillPlaceholders(query.params, values) }),
  };
}

/** Every project the caller may see: org owner/admin all of the organization's, others their own. */
export async function listDeployments(
  ctx: CallerContext,
  filter: ListFilter,
  page: PageRequest,
): Promise<Page<DeploymentRecord>> {
  const { db, identity } = ctx;
  const values = await visibleDeploymentsQuery(db, identity, filter, page).statement().raw();
  const rows = values.map((v) => readDeployment(v));
  return toPage(rows, page, (r) => ({ createdAt: r.createdAt, id: r.id }), toDeploymentRecord);
}

export async function listEnvironmentDeployments(
  ctx: CallerContext,
  environmentId: string,
  filter: ListFilter,
  page: PageRequest,
): Promise<Page<DeploymentRecord>> {
  const { db, identity } = ctx;
  const keys = compiledKeyset({ createdAt: deployments.createdAt, id: deployments.id }, page);
  const query = compiled(`environment-deployments:${keys.variant}:${statusVariant(filter)}`, (b) =>
    b
      .select(deploymentColumns)
      .from(deployments)
      .where(
        and(eq(deployments.environmentId, sql.placeholder("environmentId")), statusIn(filter), keys.where),
      )
      .orderBy(...keys.orderBy)
      .limit(keys.limit),
  );
  // The environment's lookup and the page in one round trip; the page is only used if the lookup passes.
  return guardedPage(
    db,
    authorizedLookup(db, identity, environments, environmentId, "read", "Environment"),
    page,
    { statement: bindCompiled(db, query, { environmentId, ...pageValues(page) }), read: readDeployment },
    toDeploymentRecord,
  );
}

export async function listStackDeployments(
  ctx: CallerContext,
  stackId: string,
  filter: ListFilter,
  page: PageRequest,
): Promise<Page<DeploymentRecord>> {
  const { db, identity } = ctx;
  // The (stack_id, created_at, deployment_id) index of deployment_stacks carries the order.
  const { where, orderBy } = keyset(
    { createdAt: deploymentStacks.createdAt, id: deploymentStacks.deploymentId },
    page,
  );
  const query = db
    .select(deploymentColumns)
    .from(deploymentStacks)
    .innerJoin(deployments, eq(deployments.id, deploymentStacks.deploymentId))
    .where(and(eq(deploymentStacks.stackId, stackId), statusIn(filter), where))
    .orderBy(...orderBy)
    .limit(page.limit + 1);
  // The stack's lookup and the page in one round trip; the page is only used if the lookup passes.
  return guardedPage(
    db,
    authorizedLookup(db, identity, stacks, stackId, "read", "Stack"),
    page,
    { statement: bindQuery(db, query), read: readDeployment },
    toDeploymentRecord,
  );
}
