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
import { and, eq, gt, isNull, or, type SQL, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import { bindQuery } from "../../db/compiled";
import { apiKeys, deployments, orgLimits } from "../../db/schema";
import { limitExceeded, notFound } from "../../errors";
import { toIso } from "../../lib/time";
import { LIMIT_NAMES, type LimitName, type OrgLimitsRecord } from "../../schemas/limits";
import type { OrgLimitsInput } from "../../schemas/limits-writes";
import { auditEntry } from "../audit/entry";
import { checkIfMatch, hasIfMatch, preconditionFailed, unchangedSince } from "../preconditions";

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
 * The two counts no counter keeps, as of `nowMs`: the organization's live keys (by the partial
 * index of keys not revoked) and its deployments of the last 24 hours, with the oldest of them
 * (for `reset`). New expressions each call (a query names them with aliases of its own).
 */
function countsAsOf(orgId: string, nowMs: number) {
  const now = toIso(nowMs);
  const since = toIso(nowMs - DAY_MS);
  const inWindow = and(eq(deployments.orgId, orgId), gt(deployments.createdAt, since));
  return {
    apiKeysUsed: sql<number>`(SELECT count(*) FROM ${apiKeys} WHERE ${and(
      eq(apiKeys.orgId, orgId),
      isNull(apiKeys.revokedAt),
      or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
    )})`,
    deploymentsUsed: sql<number>`(SELECT count(*) FROM ${deployments} WHERE ${inWindow})`,
    oldestDeployment: sql<
      string | null
    >`(SELECT min(${deployments.createdAt}) FROM ${deployments} WHERE ${inWindow})`,
  };
}

/**
 * The organization's limits row with the two counts no counter keeps (`countsAsOf`), as one
 * statement. Every field is named by its own column or alias, so a batch of raw statements reads
 * it as well (`readRaw`).
 */
function rowQuery(ctx: ServiceContext, orgId: string, nowMs: number) {
  const counts = countsAsOf(orgId, nowMs);
  return ctx.db
    .select({
      ...orgLimitsColumns,
      apiKeysUsed: counts.apiKeysUsed.mapWith(Number).as("api_keys_used"),
      deploymentsUsed: counts.deploymentsUsed.mapWith(Number).as("deployments_used"),
      oldestDeployment: counts.oldestDeployment.as("oldest_deployment"),
    })
    .from(orgLimits)
    .where(eq(orgLimits.orgId, orgId));
}

/**
 * SQL true while the organization's limits record is still the one `row` read at `nowMs` (its
 * ETag a function of these values): every column of its row, and the two counts as of that time.
 */
function stillRecordOf(orgId: string, row: LimitsRow, nowMs: number): SQL {
  const counts = countsAsOf(orgId, nowMs);
  return and(
    unchangedSince(orgLimits, row),
    sql`${counts.apiKeysUsed} = ${row.apiKeysUsed}`,
    sql`${counts.deploymentsUsed} = ${row.deploymentsUsed}`,
    row.oldestDeployment === null
      ? sql`${counts.oldestDeployment} IS NULL`
      : sql`${counts.oldestDeployment} = ${row.oldestDeployment}`,
  ) as SQL;
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

/**
 * The internal `internalReplaceOrgLimits`: the names given take their new value, the others keep
 * theirs, in one batch that decides and writes together (so operators changing the limits at once
 * each answer `200`, in commit order, and none is refused for the others): the audit entry reads
 * the limits it replaces in its own statement (`changes`: exactly the limits that changed, `from`
 * what they were; no entry when none changes), the UPDATE writes only what differs, and the
 * answer is the row as that batch left it. A lower limit removes nothing (only growth is refused).
 * Under `If-Match` (API_CONTRACT §12) the record is read first and its ETag compared, and the batch
 * writes only while the record is still the one compared (`stillRecordOf`); else `409`.
 */
export async function replaceOrgLimits(
  ctx: ServiceContext,
  orgId: string,
  input: OrgLimitsInput,
): Promise<OrgLimitsRecord> {
  const { db } = ctx;
  const given = LIMIT_NAMES.filter((name) => input[name] !== undefined);
  const nowMs = Date.now();
  let held: SQL | undefined;
  if (hasIfMatch(ctx) || given.length === 0) {
    const row = await readRow(ctx, orgId, nowMs);
    if (!row) throw notFound("Organization");
    if (await checkIfMatch(ctx, toRecord(row, nowMs))) held = stillRecordOf(orgId, row, nowMs);
    if (given.length === 0) return toRecord(row, nowMs);
  }
  // Whole numbers 0–1,000,000 (the body's schema), written as literals: D1 binds a JS number as a
  // REAL, which json_object would write as `5.0`.
  const value = (name: LimitName) => sql.raw(String(Math.trunc(input[name] as number)));
  const column = (name: LimitName) => orgLimits[LIMIT_COLUMN[name]];
  const differs = or(...given.map((name) => sql`${column(name)} <> ${value(name)}`));
  const thisOrg = and(eq(orgLimits.orgId, orgId), held);
  // `{name: {from, to}}` of every name given, less those it leaves as they were (a merge patch's
  // null removes a key), in one SELECT of the row.
  const fromTo = sql.join(
    given.map((name) => sql`${name}, json_object('from', ${column(name)}, 'to', ${value(name)})`),
    sql`, `,
  );
  const unchanged = sql.join(
    given.map((name) => sql`${name}, CASE WHEN ${column(name)} <> ${value(name)} THEN json('{}') END`),
    sql`, `,
  );
  const set: Partial<Record<(typeof LIMIT_COLUMN)[LimitName], number>> = {};
  for (const name of given) set[LIMIT_COLUMN[name]] = input[name] as number;
  const [asCompared, , , rows] = await db.batch([
    db.select({ orgId: orgLimits.orgId }).from(orgLimits).where(thisOrg),
    auditEntry(ctx, {
      orgId,
      target: { type: "organization", id: orgId },
      when: sql`EXISTS (SELECT 1 FROM ${orgLimits} WHERE ${and(thisOrg, differs)})`,
      changes: sql`(SELECT json_patch(json_object(${fromTo}), json_object(${unchanged})) FROM ${orgLimits} WHERE ${eq(orgLimits.orgId, orgId)})`,
    }),
    db.update(orgLimits).set(set).where(and(thisOrg, differs)),
    rowQuery(ctx, orgId, nowMs),
  ]);
  const row = rows[0];
  if (!row) throw notFound("Organization");
  if (asCompared.length === 0) throw preconditionFailed();
  return toRecord(row, nowMs);
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
