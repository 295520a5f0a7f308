/**
 * An organization's limits (API_CONTRACT §29): reading them, the operator's change, and the few
 * requests that must answer a refusal without writing (a dry run).
 *
 * The refusal itself is not made here. Every count is decided by the statement that writes what
 * it counts (migration 0015's triggers on the counted tables and on `org_limits`): a write that
 * would raise a count past its limit aborts inside its own batch, so the count and the write are
 * one atomic step whatever route, isolate or replica makes them, and a batch that fails changes
 * nothing. The error boundary turns the abort into the `409` (`limitExceededOf`, src/errors.ts).
 * A write that passes its check runs no statement more than it did before limits.
 */
import { and, eq, gt, isNull, or, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import { bindQuery } from "../../db/compiled";
import { apiKeys, deployments, orgLimits } from "../../db/schema";
import { limitExceeded, notFound } from "../../errors";
import { toIso } from "../../lib/time";
import { LIMIT_NAMES, type LimitName, type OrgLimitsRecord } from "../../schemas/limits";
import type { OrgLimitsInput } from "../../schemas/limits-writes";
import { auditEntry } from "../audit/entry";

const DAY_MS = 24 * 3600 * 1000;

/** Each limit's column in `org_limits`. */
const LIMIT_COLUMN = {
  projects: "projectsLimit",
  environments: "environmentsLimit",
  variables: "variablesLimit",
  api_keys: "apiKeysLimit",
  integrations: "integrationsLimit",
  audit_streams: "auditStreamsLimit",
  deployments_per_day: "deploymentsPerDayLimit",
} as const satisfies Record<LimitName, keyof typeof orgLimits.$inferSelect>;

type LimitsRow = typeof orgLimits.$inferSelect & {
  apiKeysUsed: number;
  deploymentsUsed: number;
  oldestDeployment: string | null;
};

const orgLimitsColumns = {
  orgId: orgLimits.orgId,
  projectsLimit: orgLimits.projectsLimit,
  environmentsLimit: orgLimits.environmentsLimit,
  variablesLimit: orgLimits.variablesLimit,
  apiKeysLimit: orgLimits.apiKeysLimit,
  integrationsLimit: orgLimits.integrationsLimit,
  auditStreamsLimit: orgLimits.auditStreamsLimit,
  deploymentsPerDayLimit: orgLimits.deploymentsPerDayLimit,
  projectsUsed: orgLimits.projectsUsed,
  environmentsUsed: orgLimits.environmentsUsed,
  variablesUsed: orgLimits.variablesUsed,
  integrationsUsed: orgLimits.integrationsUsed,
  auditStreamsUsed: orgLimits.auditStreamsUsed,
};

/**
 * The organization's limits row with the two counts no counter keeps, as one statement: its live
 * keys (by the partial index of keys not revoked) and its deployments of the last 24 hours (with
 * the oldest of them, for `reset`), both counted as of `nowMs`. Every field is named by its own
 * column or alias, so a batch of raw statements reads it as well (`readRaw`).
 */
function rowQuery(ctx: ServiceContext, orgId: string, nowMs: number) {
  const now = toIso(nowMs);
  const since = toIso(nowMs - DAY_MS);
  const inWindow = and(eq(deployments.orgId, orgId), gt(deployments.createdAt, since));
  return ctx.db
    .select({
      ...orgLimitsColumns,
      apiKeysUsed: sql<number>`(SELECT count(*) FROM ${apiKeys} WHERE ${and(
        eq(apiKeys.orgId, orgId),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
      )})`
        .mapWith(Number)
        .as("api_keys_used"),
      deploymentsUsed: sql<number>`(SELECT count(*) FROM ${deployments} WHERE ${inWindow})`
        .mapWith(Number)
        .as("deployments_used"),
      oldestDeployment: sql<
        string | null
      >`(SELECT min(${deployments.createdAt}) FROM ${deployments} WHERE ${inWindow})`.as("oldest_deployment"),
    })
    .from(orgLimits)
    .where(eq(orgLimits.orgId, orgId));
}

const readRow = (ctx: ServiceContext, orgId: string, nowMs: number): Promise<LimitsRow | undefined> =>
  rowQuery(ctx, orgId, nowMs).get();

/** The row as a raw batch answers it (objects keyed by column name and alias). */
function readRaw(raw: Record<string, unknown>): LimitsRow {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(orgLimitsColumns)) row[key] = raw[column.name];
  row.apiKeysUsed = Number(raw.api_keys_used);
  row.deploymentsUsed = Number(raw.deployments_used);
  row.oldestDeployment = raw.oldest_deployment ?? null;
  return row as LimitsRow;
}

/** Each limit's value and what it counts now, by name. */
function figures(row: LimitsRow): Record<LimitName, { limit: number; used: number }> {
  return {
    projects: { limit: row.projectsLimit, used: row.projectsUsed },
    environments: { limit: row.environmentsLimit, used: row.environmentsUsed },
    variables: { limit: row.variablesLimit, used: row.variablesUsed },
    api_keys: { limit: row.apiKeysLimit, used: row.apiKeysUsed },
    integrations: { limit: row.integrationsLimit, used: row.integrationsUsed },
    audit_streams: { limit: row.auditStreamsLimit, used: row.auditStreamsUsed },
    deployments_per_day: { limit: row.deploymentsPerDayLimit, used: row.deploymentsUsed },
  };
}

function toRecord(row: LimitsRow, nowMs: number): OrgLimitsRecord {
  const byName = figures(row);
  return {
    org_id: row.orgId,
    limits: LIMIT_NAMES.map((name) => {
      const { limit, used } = byName[name];
      if (name !== "deployments_per_day") return { name, limit, used };
      const leaves = row.oldestDeployment ? Date.parse(row.oldestDeployment) + DAY_MS : nowMs;
      return { name, limit, used, reset: Math.max(0, Math.ceil((leaves - nowMs) / 1000)) };
    }),
  };
}

/** `getOrgLimits`: any key of the organization; another organization is `404`. One round trip. */
export async function getOrgLimits(ctx: CallerContext, orgId: string): Promise<OrgLimitsRecord> {
  if (orgId !== ctx.identity.orgId) throw notFound("Organization");
  const nowMs = Date.now();
  const row = await readRow(ctx, orgId, nowMs);
  if (!row) throw notFound("Organization");
  return toRecord(row, nowMs);
}

/** How many times the operator's change is applied to limits another change moved meanwhile. */
const REPLACE_ATTEMPTS = 8;

/**
 * The internal `internalReplaceOrgLimits`: the names given take their new value, the others keep
 * theirs. Applied to the limits as read (a compare-and-set on the columns it changes), so its audit
 * entry's `changes` are exactly the limits that changed, `from` what they were; a change of nothing
 * writes nothing. A lower limit removes nothing (only growth is refused).
 */
export async function replaceOrgLimits(
  ctx: ServiceContext,
  orgId: string,
  input: OrgLimitsInput,
): Promise<OrgLimitsRecord> {
  const { db } = ctx;
  for (let attempt = 1; attempt <= REPLACE_ATTEMPTS; attempt++) {
    const nowMs = Date.now();
    const row = await readRow(ctx, orgId, nowMs);
    if (!row) throw notFound("Organization");
    const current = figures(row);
    const changed = LIMIT_NAMES.filter(
      (name) => input[name] !== undefined && input[name] !== current[name].limit,
    );
    if (changed.length === 0) return toRecord(row, nowMs);
    const set: Partial<Record<(typeof LIMIT_COLUMN)[LimitName], number>> = {};
    for (const name of changed) set[LIMIT_COLUMN[name]] = input[name] as number;
    const asRead = changed.map((name) => eq(orgLimits[LIMIT_COLUMN[name]], current[name].limit));
    const [result] = await db.batch([
      db
        .update(orgLimits)
        .set(set)
        .where(and(eq(orgLimits.orgId, orgId), ...asRead)),
      auditEntry(ctx, {
        orgId,
        target: { type: "organization", id: orgId },
        changes: Object.fromEntries(
          changed.map((name) => [name, { from: current[name].limit, to: input[name] as number }]),
        ),
      }),
    ]);
    if ((result as D1Result).meta.changes) return toRecord({ ...row, ...set }, nowMs);
  }
  throw new Error("the organization's limits kept changing while the operator's change was applied");
}

/**
 * A dry run's check of the room for `adding` more of `name` (see `refuseBeyondLimit`), as a raw
 * statement for a batch of the dry run's own reads (one round trip), and the check of its answer.
 */
export function roomCheck(ctx: ServiceContext, orgId: string, name: LimitName, adding: number) {
  return {
    statement: bindQuery(ctx.db, rowQuery(ctx, orgId, Date.now())),
    check(result: D1Result<Record<string, unknown>> | undefined): void {
      const raw = result?.results[0];
      if (raw && adding > 0) refuseWithout(readRaw(raw), name, adding);
    },
  };
}

function refuseWithout(row: LimitsRow, name: LimitName, adding: number): void {
  const { limit, used } = figures(row)[name];
  if (used + adding > limit) throw limitExceeded(name);
}

/**
 * Refuses, as the write itself would, a request that changes nothing but answers as if it did (a
 * dry run): `adding` more of `name` than the organization has room for is the same `409`. Nothing
 * to add (a change that deletes as many as it creates) never is.
 */
export async function refuseBeyondLimit(
  ctx: ServiceContext,
  orgId: string,
  name: LimitName,
  adding: number,
): Promise<void> {
  if (adding <= 0) return;
  const row = await readRow(ctx, orgId, Date.now());
  if (row) refuseWithout(row, name, adding);
}
