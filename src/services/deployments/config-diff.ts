/**
 * The diff between two configurations of a deployment's environment (API_CONTRACT §24,
 * `getDeploymentConfigDiff`), read through ./config.ts's reconstruction of a scope at a version;
 * never an oracle for a secret.
 */
import { sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindQuery } from "../../db/compiled";
import { deployments, type VariableType } from "../../db/schema";
import { badInput } from "../../errors";
import { ID_PATTERN } from "../../lib/ids";
import type { ConfigDiff, ConfigDiffChange } from "../../schemas/config";
import { authorizedLookup } from "../access";
import { lookupThen } from "../lookup";
import { byName } from "../variables/history";
import { ENVIRONMENT_SET } from "../variables/parent";
import {
  byScope,
  environmentOfDeployment,
  noConfig,
  pinsNow,
  pinsOfDeployment,
  stateStatement,
} from "./config";

const isSecret = (type: VariableType | null | undefined) => type === "secret" || type === "secure_string";

/**
 * `getDeploymentConfigDiff`: the changes from this deployment's configuration to `against`
 * (`current`: each scope as it is now; or another deployment of the environment with a config).
 * For a `string` on both sides `value_changed` compares the values; for a name that is secret on
 * either side it says only whether a value was written to it between the two versions. One round
 * trip: the lookup, the other deployment's row, and both sides' scopes.
 */
export async function getDeploymentConfigDiff(
  ctx: CallerContext,
  id: string,
  against: string,
): Promise<ConfigDiff> {
  const { db, identity } = ctx;
  const current = against === "current";
  const otherId = current || !ID_PATTERN.test(against) ? "" : against;
  const environment = environmentOfDeployment(id);
  const {
    found: { row },
    results: [otherRows, left, right],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, deployments, id, "read", "Deployment"),
    bindQuery(
      db,
      db
        .select({ environmentId: deployments.environmentId, config: deployments.config })
        .from(deployments)
        .where(sql`${deployments.id} = ${otherId}`),
    ),
    stateStatement(ctx, environment, pinsOfDeployment(id), "strings"),
    stateStatement(ctx, environment, current ? pinsNow(environment) : pinsOfDeployment(otherId), "strings"),
  );
  if (!row.config) throw noConfig();
  const [other] = otherRows;
  // "Another deployment" (§24): itself is refused like any deployment that is not one.
  if (!current && (against === id || !other || other[0] !== row.environmentId || other[1] === null)) {
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
  const a = byScope(left);
  const b = byScope(right);
  const environmentId = row.environmentId;
  const scopes = new Set([...a.keys(), ...b.keys()]);
  const ordered = [...scopes].sort((x, y) =>
    x === ENVIRONMENT_SET ? -1 : y === ENVIRONMENT_SET ? 1 : x < y ? -1 : x > y ? 1 : 0,
  );
  const changes: ConfigDiffChange[] = [];
  for (const scope of ordered) {
    const from = new Map((a.get(scope) ?? []).map((v) => [v.name, v]));
    const to = new Map((b.get(scope) ?? []).map((v) => [v.name, v]));
    const scopeRef =
      scope === ENVIRONMENT_SET
        ? { type: "environment" as const, id: environmentId }
        : { type: "component" as const, id: scope };
    for (const { name } of byName([...new Set([...from.keys(), ...to.keys()])].map((n) => ({ name: n })))) {
      const l = from.get(name);
      const r = to.get(name);
      const action = !l ? "created" : !r ? "deleted" : "updated";
      const valueChanged =
        !l || !r ? true : isSecret(l.type) || isSecret(r.type) ? l.at !== r.at : l.value !== r.value;
      if (action === "updated" && l?.type === r?.type && !valueChanged) continue;
      changes.push({
        scope: scopeRef,
        name,
        action,
        type: { from: l?.type ?? null, to: r?.type ?? null },
        value_changed: valueChanged,
      });
    }
  }
  return { deployment_id: id, against, changes };
}
