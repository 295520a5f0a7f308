/**
 * Promotion (API_CONTRACT §25, `promoteDeployment`): what succeeded in one environment runs in
 * another of the project, without rebuilding it. Its stacks are mapped by `template_id`; it
 * carries the original's patch and source, and the target environment's configuration as it is
 * (configuration belongs to the environment: only the code and the change move). A dry run
 * answers the plan, with the same checks and refusals, and creates, emits and records nothing.
 *
 * The checks run in the contract's order: the target environment, the original's status, the
 * stacks. Everything they need is read in one round trip with the lookup that authorizes the
 * request; the promotion itself is one batch (the deployment, its event, its audit entry).
 */
import { sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindQuery } from "../../db/compiled";
import {
  components,
  type DeploymentConfig,
  deployments,
  environments,
  stacks,
  variables,
} from "../../db/schema";
import { badInput, conflict } from "../../errors";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { DeploymentCreateInput } from "../../schemas/deployment-writes";
import type { PromoteInput, PromotionPlan } from "../../schemas/promotion-writes";
import { authorizedLookup } from "../access";
import { publishAfterCommit } from "../events/queue";
import { eventInsert, type NewEvent, newEvent } from "../events/write";
import { lookupThen } from "../lookup";
import { roomCheck } from "../orgs/limits";
import { byName, variableSetsAtSelect } from "../variables/history";
import { ENVIRONMENT_SET } from "../variables/parent";
import { pinsOfDeployment } from "./config";
import { insertDeployment } from "./create";

type StackRow = { id: string; templateId: string };

/** The original, the target environment and both sides' stacks: one round trip. */
async function readPromotion(ctx: CallerContext, id: string, targetId: string) {
  const { db, identity } = ctx;
  const originalStacks = db
    .select({ id: stacks.id, templateId: stacks.templateId })
    .from(stacks)
    .where(
      sql`${stacks.id} IN (SELECT value FROM json_each((SELECT ${deployments.stackIds} FROM ${deployments} WHERE ${deployments.id} = ${id})))`,
    );
  const target = db
    .select({ id: environments.id, projectId: environments.projectId })
    .from(environments)
    .where(sql`${environments.id} = ${targetId}`);
  const targetStacks = db
    .select({ id: stacks.id, templateId: stacks.templateId })
    .from(stacks)
    .where(sql`${stacks.environmentId} = ${targetId}`)
    .orderBy(stacks.createdAt, stacks.id);
  const {
    found: { row },
    results: [ours, targets, theirs],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, deployments, id, "write", "Deployment"),
    bindQuery(db, originalStacks),
    bindQuery(db, target),
    bindQuery(db, targetStacks),
  );
  const asStacks = (rows: unknown[][]): StackRow[] =>
    rows.map(([sid, template]) => ({ id: sid as string, templateId: template as string }));
  return {
    original: row,
    target: targets[0] ? { id: targets[0][0] as string, projectId: targets[0][1] as string } : undefined,
    originalStacks: asStacks(ours),
    targetStacks: asStacks(theirs),
  };
}

type Read = Awaited<ReturnType<typeof readPromotion>>;

/** §25's checks, in its order; the stack mapping (original stack → target stack) when they pass. */
function check(read: Read, targetId: string): { from: string; to: string }[] {
  const { original, target } = read;
  if (!target || target.projectId !== original.projectId || target.id === original.environmentId) {
    throw badInput("`environment_id` must name another environment of the deployment's project.", [
      {
        path: "environment_id",
        message:
          target?.id === original.environmentId
            ? "The deployment's own environment: promote to another one."
            : "Not an environment of this project.",
      },
    ]);
  }
  if (original.status !== "succeeded") {
    throw conflict(`Only a \`succeeded\` deployment can be promoted; this one is \`${original.status}\`.`);
  }
  const template = new Map(read.originalStacks.map((s) => [s.id, s.templateId]));
  const byTemplate = new Map<string, string[]>();
  for (const s of read.targetStacks)
    byTemplate.set(s.templateId, [...(byTemplate.get(s.templateId) ?? []), s.id]);
  const issues: { path: string; message: string }[] = [];
  const mapping = original.stackIds.map((from, i) => {
    const templateId = template.get(from);
    const matches = templateId === undefined ? [] : (byTemplate.get(templateId) ?? []);
    if (templateId === undefined) {
      issues.push({
        path: `stack_ids.${i}`,
        message: "This stack no longer exists, so it matches no stack.",
      });
    } else if (matches.length !== 1) {
      issues.push({
        path: `stack_ids.${i}`,
        message:
          matches.length === 0
            ? `No stack of environment ${targetId} has template_id "${templateId}".`
            : `${matches.length} stacks of environment ${targetId} have template_id "${templateId}": it must be one.`,
      });
    }
    return { from, to: matches[0] ?? "" };
  });
  if (issues.length > 0) {
    throw conflict(
      "Every stack of the deployment must match exactly one stack of the target by `template_id`.",
      issues,
    );
  }
  return mapping;
}

/** `promoteDeployment`: the new deployment (`201`), or with `dry_run` the plan (`200`). */
export async function promoteDeployment(
  ctx: CallerContext,
  id: string,
  input: PromoteInput,
): Promise<{ deployment: DeploymentRecord } | { plan: PromotionPlan }> {
  const read = await readPromotion(ctx, id, input.environment_id);
  const mapping = check(read, input.environment_id);
  const { original } = read;
  if (input.dry_run) return { plan: await plan(ctx, read, input.environment_id, mapping) };

  // The stored `data` passed the create's own schema on its way in: it is that input, as kept.
  const data = original.data as DeploymentCreateInput["data"];
  const projectId = original.projectId;
  const promotedFrom = { deployment_id: original.id, environment_id: original.environmentId };
  // Two stacks of the original with one template both map to the target's one stack of it (each
  // has exactly one match, which §25 allows): the new deployment deploys that stack once.
  const targets = [...new Set(mapping.map((m) => m.to))];
  let event: NewEvent | undefined;
  const deployment = await insertDeployment(
    ctx,
    { environmentId: input.environment_id, projectId, orgId: ctx.identity.orgId },
    {
      stack_ids: targets,
      data: { patch: data.patch, source: data.source },
    },
    targets.map((to) => ({ id: to, environmentId: input.environment_id })),
    {
      promotedFrom: original.id,
      // The event carries the new record, with the configuration its own INSERT read (§24).
      also: (record) => {
        event = newEvent(projectId, "promotion.created", { deployment: record, promoted_from: promotedFrom });
        const row = (column: string) =>
          sql`(SELECT ${sql.raw(column)} FROM deployments WHERE id = ${record.id})`;
        const withConfig = sql`json_set(${JSON.stringify(event.data)}, '$.deployment.config', json(${row("config")}), '$.deployment.status', ${row("status")}, '$.deployment.gate', json(${row("gate")}))`;
        return [eventInsert(ctx.db, event, "always", withConfig)];
      },
    },
  );
  if (event) publishAfterCommit(ctx, event.id);
  return { deployment };
}

/** A scope's names on one side of a plan, by scope key (`_` or a component's name). */
type NamesByScope = Map<string, Set<string>>;

const add = (map: NamesByScope, scope: string, name: string) => {
  const names = map.get(scope) ?? new Set<string>();
  names.add(name);
  map.set(scope, names);
};

/**
 * The plan of a promotion (§25 `dry_run`): how the stacks map, and per scope (components matched
 * by name) the names the original's configuration holds that the target lacks (`missing`) and the
 * reverse (`extra`). Names only: no value is read or compared. An original without a
 * configuration is compared as its environment's variables are now.
 */
async function plan(
  ctx: CallerContext,
  read: Read,
  targetId: string,
  mapping: { from: string; to: string }[],
): Promise<PromotionPlan> {
  const { db } = ctx;
  const { original } = read;
  const config = original.config as DeploymentConfig | null;
  const componentsOf = (environmentId: string) =>
    bindQuery(
      db,
      db
        .select({ id: components.id, name: components.name })
        .from(components)
        .where(sql`${components.environmentId} = ${environmentId}`),
    );
  const currentNames = (environmentId: string) =>
    bindQuery(
      db,
      db
        .select({ scope: variables.scope, name: variables.name })
        .from(variables)
        .where(sql`${variables.environmentId} = ${environmentId}`),
    );
  const originalNames = config
    ? bindQuery(
        db,
        variableSetsAtSelect(db, sql`${original.environmentId}`, pinsOfDeployment(original.id), "none"),
      )
    : currentNames(original.environmentId);
  // The same checks and errors as the real call (§25), the organization's limits included (§29):
  // the deployment it plans would count against `deployments_per_day`.
  const room = roomCheck(ctx, ctx.identity.orgId, "deployments_per_day", 1);
  const [ours, ourComponents, theirs, theirComponents, limits] = await db.$client.batch<
    Record<string, unknown>
  >([
    originalNames,
    componentsOf(original.environmentId),
    currentNames(targetId),
    componentsOf(targetId),
    room.statement,
  ]);
  room.check(limits);
  const side = (
    rows: Record<string, unknown>[] | undefined,
    componentRows: Record<string, unknown>[] | undefined,
  ): NamesByScope => {
    const nameOf = new Map((componentRows ?? []).map((c) => [c.id as string, c.name as string]));
    const out: NamesByScope = new Map();
    for (const row of rows ?? []) {
      // A name deleted by the pinned version is not held (a reconstruction's deletion row).
      if ("type" in row && row.type === null) continue;
      const scope = row.scope as string;
      if (scope === ENVIRONMENT_SET) add(out, ENVIRONMENT_SET, row.name as string);
      else {
        const component = nameOf.get(scope);
        // A component deleted since has no scope left to deploy.
        if (component !== undefined) add(out, `c:${component}`, row.name as string);
      }
    }
    // A component without variables is still a scope (with nothing in it).
    for (const name of nameOf.values()) if (!out.has(`c:${name}`)) out.set(`c:${name}`, new Set());
    return out;
  };
  const from = side(ours?.results, ourComponents?.results);
  const to = side(theirs?.results, theirComponents?.results);
  const keys = [...new Set([...from.keys(), ...to.keys()])].sort((a, b) =>
    a === ENVIRONMENT_SET ? -1 : b === ENVIRONMENT_SET ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  const sorted = (names: string[]) => byName(names.map((name) => ({ name }))).map((n) => n.name);
  const variablesPlan = keys.flatMap((key) => {
    const mine = from.get(key) ?? new Set<string>();
    const target = to.get(key) ?? new Set<string>();
    const missing = sorted([...mine].filter((n) => !target.has(n)));
    const extra = sorted([...target].filter((n) => !mine.has(n)));
    if (missing.length === 0 && extra.length === 0) return [];
    const scope =
      key === ENVIRONMENT_SET
        ? { type: "environment" as const }
        : { type: "component" as const, name: key.slice(2) };
    return [{ scope, missing, extra }];
  });
  return { dry_run: true, environment_id: targetId, stacks: mapping, variables: variablesPlan };
}
