/**
 * The configuration each deployment runs with (API_CONTRACT §24).
 *
 * A deployment records the §18 version of each scope of its environment (its own variables and
 * each component's) when it is created: computed by the deployment's own INSERT (`currentConfig`),
 * so a variable change racing the create is wholly in it or wholly not. What those versions held
 * is read back through the same reconstruction a §18 restore uses (`scopesAtSelect`): names and
 * types for callers, values too for the engine (which deploys exactly that, never the variables as
 * they are now), and a diff between two configurations that never tells whether two secret values
 * are equal.
 */
import { type SQL, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import { bindQuery } from "../../db/compiled";
import { components, type DeploymentConfig, deployments, type VariableType } from "../../db/schema";
import { badInput, notFound } from "../../errors";
import { ID_PATTERN } from "../../lib/ids";
import type {
  ConfigDiff,
  ConfigDiffChange,
  DeploymentConfigRecord,
  InternalDeploymentConfig,
} from "../../schemas/config";
import { lookupThen, scopedLookup } from "../access";
import { byName, type ScopePin, scopesAtSelect } from "../variables/history";
import { ENVIRONMENT_SCOPE } from "../variables/scope";
import { openValue } from "../variables/values";

/**
 * The configuration of a deployment created now in `environmentId`, as SQL for its INSERT: the
 * latest version of the environment's scope and of each of its components' scopes (0 before its
 * first change), components by id. `json()` keeps the list JSON inside the object (a subquery's
 * result loses its JSON subtype).
 */
export function currentConfig(environmentId: string): SQL {
  return sql`json_object('environment_version', (SELECT coalesce(max(version), 0) FROM variable_versions WHERE environment_id = ${environmentId} AND scope = ${ENVIRONMENT_SCOPE}), 'components', json((SELECT coalesce(json_group_array(json_object('component_id', c.id, 'version', (SELECT coalesce(max(v.version), 0) FROM variable_versions AS v WHERE v.environment_id = c.environment_id AND v.scope = c.id))), '[]') FROM (SELECT id, environment_id FROM components WHERE environment_id = ${environmentId} ORDER BY id) AS c)))`;
}

/**
 * SQL true when an environment's current deployment runs with a configuration that is no longer
 * its scopes' (§24 `config_pending`): given `config`, an expression of that deployment's config
 * (null: false), the environment's scope or a component's is at another version than recorded, or
 * a component was added since (it has no recorded version).
 */
export function configPendingSql(environmentId: SQL, config: SQL): SQL {
  return sql`CASE WHEN ${config} IS NULL THEN 0 ELSE (
    (SELECT coalesce(max(version), 0) FROM variable_versions WHERE environment_id = ${environmentId} AND scope = ${ENVIRONMENT_SCOPE}) IS NOT json_extract(${config}, '$.environment_version')
    OR EXISTS (SELECT 1 FROM components AS pc WHERE pc.environment_id = ${environmentId} AND
      (SELECT coalesce(max(pv.version), 0) FROM variable_versions AS pv WHERE pv.environment_id = pc.environment_id AND pv.scope = pc.id)
      IS NOT (SELECT json_extract(pj.value, '$.version') FROM json_each(${config}, '$.components') AS pj WHERE json_extract(pj.value, '$.component_id') = pc.id))
  ) END`;
}

/** A configuration as stored, its components in id order (the order the contract gives). */
export function normalConfig(config: DeploymentConfig | null): DeploymentConfig | null {
  if (!config) return null;
  const components = [...config.components].sort((a, b) =>
    a.component_id < b.component_id ? -1 : a.component_id > b.component_id ? 1 : 0,
  );
  return { environment_version: config.environment_version, components };
}

/** One variable of a scope as a configuration pins it. */
type PinnedVariable = {
  name: string;
  type: VariableType;
  value: string;
  keyVersion: number | null;
  sealedFor: string | null;
  /** The version that last wrote it: two sides with the same one hold the same value. */
  at: number;
};

/** The variables each scope of the environment held right after the versions `pins` name, by scope. */
async function scopesAt(
  ctx: ServiceContext,
  environmentId: string,
  pins: readonly ScopePin[],
  statement?: D1PreparedStatement,
): Promise<{ byScope: Map<string, PinnedVariable[]>; extra: unknown[][] }> {
  const { db } = ctx;
  const query = bindQuery(db, scopesAtSelect(db, sql`${environmentId}`, pins));
  const [state, extra] = statement
    ? await db.$client.batch<Record<string, unknown>>([query, statement])
    : [await query.all<Record<string, unknown>>()];
  const byScope = new Map<string, PinnedVariable[]>();
  for (const row of state?.results ?? []) {
    if (row.type === null || row.value === null) continue; // deleted by then
    const scope = row.scope as string;
    const list = byScope.get(scope) ?? [];
    list.push({
      name: row.name as string,
      type: row.type as VariableType,
      value: row.value as string,
      keyVersion: (row.key_version as number | null) ?? null,
      sealedFor: (row.sealed_for as string | null) ?? null,
      at: row.at_version as number,
    });
    byScope.set(scope, list);
  }
  const rows = (extra?.results ?? []).map((r) => Object.values(r));
  return { byScope, extra: rows };
}

const pinsOf = (config: DeploymentConfig): ScopePin[] => [
  { scope: ENVIRONMENT_SCOPE, version: config.environment_version },
  ...config.components.map((c) => ({ scope: c.component_id, version: c.version })),
];

/** The names of the environment's components that still exist (a deleted one deploys nothing). */
const componentNames = (ctx: ServiceContext, environmentId: string) =>
  bindQuery(
    ctx.db,
    ctx.db
      .select({ id: components.id, name: components.name })
      .from(components)
      .where(sql`${components.environmentId} = ${environmentId}`),
  );

type Pinned = { deploymentId: string; environmentId: string; config: DeploymentConfig };

/** The configuration a deployment records, each scope's variables as `shape` makes them. */
async function readConfiguration<V>(
  ctx: ServiceContext,
  pinned: Pinned,
  shape: (variable: PinnedVariable, scope: string) => Promise<V>,
): Promise<ConfigurationOf<V>> {
  const { environmentId, config } = pinned;
  const { byScope, extra } = await scopesAt(
    ctx,
    environmentId,
    pinsOf(config),
    componentNames(ctx, environmentId),
  );
  const names = new Map(extra.map(([id, name]) => [id as string, name as string]));
  const variablesOf = (scope: string) =>
    Promise.all(byName(byScope.get(scope) ?? []).map((v) => shape(v, scope)));
  const normal = normalConfig(config) as DeploymentConfig;
  return {
    deployment_id: pinned.deploymentId,
    environment: {
      id: environmentId,
      version: normal.environment_version,
      variables: await variablesOf(ENVIRONMENT_SCOPE),
    },
    components: await Promise.all(
      normal.components
        // A component deleted since deploys nothing: its scope went with it.
        .filter((c) => names.has(c.component_id))
        .map(async (c) => ({
          id: c.component_id,
          name: names.get(c.component_id) as string,
          version: c.version,
          variables: await variablesOf(c.component_id),
        })),
    ),
  };
}

type ConfigurationOf<V> = {
  deployment_id: string;
  environment: { id: string; version: number; variables: V[] };
  components: { id: string; name: string; version: number; variables: V[] }[];
};

const noConfig = () =>
  notFound("Configuration of this deployment (it was made before configurations were recorded)");

/** `getDeploymentConfig`: names and types, for a viewer of the deployment's project. */
export async function getDeploymentConfig(ctx: CallerContext, id: string): Promise<DeploymentConfigRecord> {
  const { row } = await runDeploymentLookup(ctx, id);
  if (!row.config) throw noConfig();
  const pinned = { deploymentId: id, environmentId: row.environmentId, config: row.config };
  return readConfiguration(ctx, pinned, async (v) => ({ name: v.name, type: v.type }));
}

/** `internalGetDeploymentConfig`: what the engine deploys, values included. */
export async function getDeploymentConfigInternal(
  ctx: ServiceContext,
  id: string,
): Promise<InternalDeploymentConfig> {
  const row = await ctx.db
    .select({ environmentId: deployments.environmentId, config: deployments.config })
    .from(deployments)
    .where(sql`${deployments.id} = ${id}`)
    .get();
  if (!row) throw notFound("Deployment");
  if (!row.config) throw noConfig();
  const { environmentId } = row;
  const pinned = { deploymentId: id, environmentId, config: row.config };
  return readConfiguration(ctx, pinned, async (v, scope) => ({
    name: v.name,
    type: v.type,
    // Opened with the identity it was sealed for (a variable since deleted or renamed, too).
    value: await openValue(
      ctx,
      { id: v.sealedFor ?? "", environmentId, scope },
      { type: v.type, value: v.value, keyVersion: v.keyVersion },
      "deployment-config",
    ),
  }));
}

async function runDeploymentLookup(ctx: CallerContext, id: string, against?: string) {
  const { db, identity } = ctx;
  const other = against
    ? [
        bindQuery(
          db,
          db
            .select({ environmentId: deployments.environmentId, config: deployments.config })
            .from(deployments)
            .where(sql`${deployments.id} = ${against}`),
        ),
      ]
    : [];
  const {
    found: { row },
    results,
  } = await lookupThen(db, scopedLookup(db, identity, deployments, id, "read", "Deployment"), ...other);
  const [againstRow] = results[0] ?? [];
  return {
    row,
    against: againstRow
      ? {
          environmentId: againstRow[0] as string,
          config: againstRow[1] === null ? null : (JSON.parse(againstRow[1] as string) as DeploymentConfig),
        }
      : undefined,
  };
}

const isSecret = (type: VariableType | null | undefined) => type === "secret" || type === "secure_string";

/**
 * `getDeploymentConfigDiff`: the changes from this deployment's configuration to `against`
 * (`current`: each scope as it is now; or another deployment of the environment with a config).
 * For a `string` on both sides `value_changed` compares the values; for a name that is secret on
 * either side it says only whether a value was written to it between the two versions.
 */
export async function getDeploymentConfigDiff(
  ctx: CallerContext,
  id: string,
  against: string,
): Promise<ConfigDiff> {
  const current = against === "current";
  const { row, against: other } = await runDeploymentLookup(
    ctx,
    id,
    current || !ID_PATTERN.test(against) ? undefined : against,
  );
  if (!row.config) throw noConfig();
  // "Another deployment" (§24): itself is refused like any deployment that is not one.
  if (!current && (against === id || !other || other.environmentId !== row.environmentId || !other.config)) {
    throw badInput(
      "`against` must be `current` or another deployment of the same environment with a configuration.",
      [
        {
          path: "against",
          message: "Not `current` nor a deployment of this environment with a configuration.",
        },
      ],
    );
  }
  const environmentId = row.environmentId;
  const from = pinsOf(row.config);
  // This side, and (against `current`) the components the environment has now, in one round trip.
  const a = await scopesAt(
    ctx,
    environmentId,
    from,
    current ? componentNames(ctx, environmentId) : undefined,
  );
  // `current`: each scope as it is now, the versions as high as any can be.
  const to: ScopePin[] = current
    ? [
        { scope: ENVIRONMENT_SCOPE, version: Number.MAX_SAFE_INTEGER },
        ...a.extra.map(([cid]) => ({ scope: cid as string, version: Number.MAX_SAFE_INTEGER })),
      ]
    : pinsOf(other?.config as DeploymentConfig);
  const b = await scopesAt(ctx, environmentId, to);
  const scopes = new Set([...from, ...to].map((p) => p.scope));
  const ordered = [...scopes].sort((x, y) =>
    x === ENVIRONMENT_SCOPE ? -1 : y === ENVIRONMENT_SCOPE ? 1 : x < y ? -1 : x > y ? 1 : 0,
  );
  const changes: ConfigDiffChange[] = [];
  for (const scope of ordered) {
    const left = new Map((a.byScope.get(scope) ?? []).map((v) => [v.name, v]));
    const right = new Map((b.byScope.get(scope) ?? []).map((v) => [v.name, v]));
    const scopeRef =
      scope === ENVIRONMENT_SCOPE
        ? { type: "environment" as const, id: environmentId }
        : { type: "component" as const, id: scope };
    for (const name of byName([...new Set([...left.keys(), ...right.keys()])].map((n) => ({ name: n })))) {
      const l = left.get(name.name);
      const r = right.get(name.name);
      const action = !l ? "created" : !r ? "deleted" : "updated";
      const valueChanged =
        !l || !r ? true : isSecret(l.type) || isSecret(r.type) ? l.at !== r.at : l.value !== r.value;
      if (action === "updated" && l?.type === r?.type && !valueChanged) continue;
      changes.push({
        scope: scopeRef,
        name: name.name,
        action,
        type: { from: l?.type ?? null, to: r?.type ?? null },
        value_changed: valueChanged,
      });
    }
  }
  return { deployment_id: id, against, changes };
}
