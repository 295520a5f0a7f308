/**
 * The configuration each deployment runs with (API_CONTRACT §24).
 *
 * A deployment records the §18 version of each scope of its environment (its own variables and
 * each component's) when it is created: computed by the deployment's own INSERT (`currentConfig`),
 * so a variable change racing the create is wholly in it or wholly not. What those versions held
 * is read back through the same reconstruction a §18 restore uses (`variableSetsAtSelect`): names and
 * types for callers, values too for the engine (which deploys exactly that, never the variables as
 * they are now), and, in ./config-diff.ts, a diff between two configurations that never tells
 * whether two secret values are equal.
 */
import { type SQL, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import { bindQuery } from "../../db/compiled";
import { components, type DeploymentConfig, deployments, type VariableType } from "../../db/schema";
import { notFound } from "../../errors";
import type { DeploymentConfigRecord, InternalDeploymentConfig } from "../../schemas/config";
import { authorizedLookup } from "../access";
import { auditEntry } from "../audit/entry";
import { lookupThen } from "../lookup";
import { byName, type ValuesRead, variableSetsAtSelect } from "../variables/history";
import { ENVIRONMENT_SET } from "../variables/parent";
import { openValue } from "../variables/values";

/**
 * The configuration of a deployment created now in `environmentId`, as SQL for its INSERT: the
 * latest version of the environment's scope and of each of its components' scopes (0 before its
 * first change), components by id. `json()` keeps the list JSON inside the object (a subquery's
 * result loses its JSON subtype).
 */
export function currentConfig(environmentId: string): SQL {
  return sql`json_object('environment_version', (SELECT coalesce(max(version), 0) FROM variable_versions WHERE environment_id = ${environmentId} AND scope = ${ENVIRONMENT_SET}), 'components', json((SELECT coalesce(json_group_array(json_object('component_id', c.id, 'version', (SELECT coalesce(max(v.version), 0) FROM variable_versions AS v WHERE v.environment_id = c.environment_id AND v.scope = c.id))), '[]') FROM (SELECT id, environment_id FROM components WHERE environment_id = ${environmentId} ORDER BY id) AS c)))`;
}

/**
 * SQL true when an environment's current deployment runs with a configuration that is no longer
 * its scopes' (§24 `config_pending`): given `config`, an expression of that deployment's config
 * (null: false), the environment's scope or a component's is at another version than recorded, or
 * a component was added since (it has no recorded version).
 */
export function configPendingSql(environmentId: SQL, config: SQL): SQL {
  return sql`CASE WHEN ${config} IS NULL THEN 0 ELSE (
    (SELECT coalesce(max(version), 0) FROM variable_versions WHERE environment_id = ${environmentId} AND scope = ${ENVIRONMENT_SET}) IS NOT json_extract(${config}, '$.environment_version')
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

/** The highest version a scope can have: a scope pinned at it is the scope as it is now. */
const NOW = Number.MAX_SAFE_INTEGER;

/** The (scope, version) rows a deployment's `config` pins, read by the database from the row. */
export const pinsOfDeployment = (deploymentId: string): SQL =>
  sql`SELECT ${ENVIRONMENT_SET} AS scope, json_extract(d.config, '$.environment_version') AS version FROM deployments AS d WHERE d.id = ${deploymentId} AND d.config IS NOT NULL UNION ALL SELECT json_extract(c.value, '$.component_id'), json_extract(c.value, '$.version') FROM deployments AS d, json_each(d.config, '$.components') AS c WHERE d.id = ${deploymentId}`;

/** Every scope of an environment as it is now: its own, and each of its components'. */
export const pinsNow = (environmentId: SQL): SQL =>
  sql`SELECT ${ENVIRONMENT_SET} AS scope, ${NOW} AS version UNION ALL SELECT id, ${NOW} FROM components WHERE environment_id = ${environmentId}`;

/** The environment of a deployment, for a statement that shares a batch with its lookup. */
export const environmentOfDeployment = (deploymentId: string): SQL =>
  sql`(SELECT environment_id FROM deployments WHERE id = ${deploymentId})`;

/** A statement of the scopes at `pins`' versions, for the batch. */
export const stateStatement = (ctx: ServiceContext, environment: SQL, pins: SQL, values: ValuesRead) =>
  bindQuery(ctx.db, variableSetsAtSelect(ctx.db, environment, pins, values));

/** The rows of `stateStatement`, by scope; a name deleted by then is not held. */
export function byScope(rows: readonly unknown[][]): Map<string, PinnedVariable[]> {
  const out = new Map<string, PinnedVariable[]>();
  for (const [name, type, value, keyVersion, sealedFor, at, scope] of rows) {
    if (type === null || value === null) continue;
    const list = out.get(scope as string) ?? [];
    list.push({
      name: name as string,
      type: type as VariableType,
      value: value as string,
      keyVersion: (keyVersion as number | null) ?? null,
      sealedFor: (sealedFor as string | null) ?? null,
      at: at as number,
    });
    out.set(scope as string, list);
  }
  return out;
}

/** The components of the environment that exist now (a deleted one deploys nothing), id → name. */
const componentNames = (ctx: ServiceContext, environment: SQL) =>
  bindQuery(
    ctx.db,
    ctx.db
      .select({ id: components.id, name: components.name })
      .from(components)
      .where(sql`${components.environmentId} = ${environment}`),
  );

const namesOf = (rows: readonly unknown[][]) =>
  new Map(rows.map(([id, name]) => [id as string, name as string]));

type ConfigurationOf<V> = {
  deployment_id: string;
  environment: { id: string; version: number; variables: V[] };
  components: { id: string; name: string; version: number; variables: V[] }[];
};

/** The configuration `config` pins, each variable as `shape` makes it. */
async function configurationOf<V>(
  deploymentId: string,
  environmentId: string,
  config: DeploymentConfig,
  state: Map<string, PinnedVariable[]>,
  names: Map<string, string>,
  shape: (variable: PinnedVariable, scope: string) => Promise<V>,
): Promise<ConfigurationOf<V>> {
  const variablesOf = (scope: string) =>
    Promise.all(byName(state.get(scope) ?? []).map((v) => shape(v, scope)));
  const normal = normalConfig(config) as DeploymentConfig;
  return {
    deployment_id: deploymentId,
    environment: {
      id: environmentId,
      version: normal.environment_version,
      variables: await variablesOf(ENVIRONMENT_SET),
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

export const noConfig = () =>
  notFound("Configuration of this deployment (it was made before configurations were recorded)");

/**
 * `getDeploymentConfig`: names and types, for a viewer of the deployment's project. One round
 * trip: the lookup that authorizes it, its scopes at the versions its row pins, the components.
 */
export async function getDeploymentConfig(ctx: CallerContext, id: string): Promise<DeploymentConfigRecord> {
  const { db, identity } = ctx;
  const environment = environmentOfDeployment(id);
  const {
    found: { row },
    results: [state, names],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, deployments, id, "read", "Deployment"),
    // Names and types: no value is read.
    stateStatement(ctx, environment, pinsOfDeployment(id), "none"),
    componentNames(ctx, environment),
  );
  if (!row.config) throw noConfig();
  return configurationOf(id, row.environmentId, row.config, byScope(state), namesOf(names), async (v) => ({
    name: v.name,
    type: v.type,
  }));
}

/**
 * `internalGetDeploymentConfig`: what the engine deploys, values included. One round trip of reads,
 * then, as for every reveal (API_CONTRACT §14: "every variable value reveal" writes one audit
 * entry), its entry: written before any value is opened, so a reveal that cannot be recorded does
 * not happen, and only for a deployment whose configuration is answered.
 */
export async function getDeploymentConfigInternal(
  ctx: ServiceContext,
  id: string,
): Promise<InternalDeploymentConfig> {
  const { db } = ctx;
  const environment = environmentOfDeployment(id);
  const [rows, state, names] = await db.$client.batch<Record<string, unknown>>([
    bindQuery(
      db,
      db
        .select({
          environmentId: deployments.environmentId,
          projectId: deployments.projectId,
          config: deployments.config,
        })
        .from(deployments)
        .where(sql`${deployments.id} = ${id}`),
    ),
    stateStatement(ctx, environment, pinsOfDeployment(id), "all"),
    componentNames(ctx, environment),
  ]);
  const row = rows?.results[0];
  if (!row) throw notFound("Deployment");
  if (row.config === null) throw noConfig();
  const environmentId = row.environment_id as string;
  const config = JSON.parse(row.config as string) as DeploymentConfig;
  await auditEntry(ctx, {
    target: { type: "deployment", id },
    projectId: row.project_id as string,
    when: "always",
  }).run();
  const values = (r: { results: Record<string, unknown>[] } | undefined) =>
    (r?.results ?? []).map(Object.values);
  return configurationOf(
    id,
    environmentId,
    config,
    byScope(values(state)),
    namesOf(values(names)),
    async (v, scope) => ({
      name: v.name,
      type: v.type,
      // Opened with the identity it was sealed for (a variable since deleted or renamed, too).
      value: await openValue(
        ctx,
        { id: v.sealedFor ?? "", environmentId, scope },
        { type: v.type, value: v.value, keyVersion: v.keyVersion },
        "deployment-config",
      ),
    }),
  );
}
