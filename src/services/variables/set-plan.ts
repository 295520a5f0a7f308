/**
 * Planning a change of a whole scope (API_CONTRACT §18) and the statements that make it.
 *
 * A plan compares what the request wants with what the scope holds, name by name: created,
 * updated (type or value differ), deleted, or unchanged (type and value both as held; secret
 * values are opened to compare, except for a key that may not reveal them, for which a sealed
 * name is always updated: `countsAsChanged`). Its writes are a handful of statements whatever the number of
 * names: the variables are inserted, updated and deleted from one JSON parameter per statement
 * (`json_each`), so a change of 500 names is one D1 batch of about ten statements.
 */
import { eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { orgLimits, type VariableType, type VersionChange, variables } from "../../db/schema";
import { badInput } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { VariableChange } from "../../schemas/variable-set";
import { auditEntry } from "../audit/entry";
import {
  byName,
  createdChange,
  deletedChange,
  deletion,
  jsonChunks,
  plannedVersion,
  storedRow,
  type ValueRow,
} from "./history";
import type { VariableParent, VariableSet } from "./parent";
import { variableSetTarget } from "./parent";
import { countsAsChanged, holdsValue, storedValue } from "./values";

export type VariableRow = typeof variables.$inferSelect;

/** What the request wants of one name: a type and value, or to be gone. */
export type Wanted = {
  name: string;
  /** Null: delete the name. */
  type: VariableType | null;
  /** The plaintext value, opened only when it must be compared or sealed. */
  plaintext: () => Promise<string>;
  /** The value as a version stored it (a restore): when the variable stores just that, it is unchanged. */
  stored?: ValueRow;
};

type Write = { name: string; type: VariableType; plaintext: string; existing?: VariableRow };

export type Plan = {
  /** Every name the request gave or removed, by name, `unchanged` ones included. */
  changes: VariableChange[];
  writes: Write[];
  deletes: VariableRow[];
};

const identityOf = (row: VariableRow) => ({ id: row.id, environmentId: row.environmentId, scope: row.scope });

/**
 * The plan of `wanted` against the scope's `current` variables (those of the wanted names, or in
 * `replace` mode all of them). A deletion of a name the scope does not hold is `400` at `pathOf`.
 */
export async function planChange(
  ctx: ServiceContext,
  current: readonly VariableRow[],
  wanted: readonly Wanted[],
  mode: "merge" | "replace",
  pathOf: (name: string) => string,
): Promise<Plan> {
  const held = new Map(current.map((row) => [row.name, row]));
  const changes: VariableChange[] = [];
  const writes: Write[] = [];
  const deletes: VariableRow[] = [];
  const missing: string[] = [];
  for (const want of wanted) {
    const row = held.get(want.name);
    if (want.type === null) {
      if (!row) missing.push(want.name);
      else {
        deletes.push(row);
        changes.push(deletedChange(row));
      }
      continue;
    }
    const type = want.type;
    if (!row) {
      writes.push({ name: want.name, type, plaintext: await want.plaintext() });
      changes.push(createdChange({ name: want.name, type }));
      continue;
    }
    if (countsAsChanged(ctx, row.type, type)) {
      writes.push({ name: row.name, type, plaintext: await want.plaintext(), existing: row });
      changes.push({
        name: row.name,
        action: "updated",
        type: { from: row.type, to: type },
        value_changed: true,
      });
      continue;
    }
    const same = want.stored?.type === row.type && want.stored.value === row.value;
    const plaintext = same ? "" : await want.plaintext();
    const holds = same || (await holdsValue(ctx, identityOf(row), row, plaintext));
    if (holds && row.type === type) {
      changes.push({
        name: row.name,
        action: "unchanged",
        type: { from: type, to: type },
        value_changed: false,
      });
      continue;
    }
    // Same value, new type: the value is sealed (or stored in clear) anew all the same.
    const value = holds && same ? await want.plaintext() : plaintext;
    writes.push({ name: row.name, type, plaintext: value, existing: row });
    changes.push({
      name: row.name,
      action: "updated",
      type: { from: row.type, to: type },
      value_changed: !holds,
    });
  }
  if (missing.length > 0) {
    throw badInput(
      "The change deletes names this scope does not hold; nothing changed.",
      missing.map((name) => ({ path: pathOf(name), message: "No variable of this name in this scope." })),
    );
  }
  if (mode === "replace") {
    const given = new Set(wanted.map((w) => w.name));
    for (const row of current) {
      if (given.has(row.name)) continue;
      deletes.push(row);
      changes.push(deletedChange(row));
    }
  }
  return { changes: byName(changes), writes, deletes };
}

/** Whether the plan changes anything. */
export const changesSomething = (plan: Plan) => plan.writes.length > 0 || plan.deletes.length > 0;

/**
 * The batch that makes `plan` version `version` of the scope: the version row first (its key
 * refuses a number another change took meanwhile, aborting the whole batch), the audit entry,
 * the variables created, updated and deleted, and the version's value rows, each value sealed
 * once and stored alike in the variable and in its version.
 */
export async function planStatements(
  ctx: ServiceContext,
  parent: VariableParent,
  scope: VariableSet,
  version: number,
  plan: Plan,
  opts: { audit: boolean } = { audit: true },
) {
  const { db } = ctx;
  const now = nowIso();
  const sealed = await Promise.all(
    plan.writes.map(async (w) => {
      const id = w.existing?.id ?? newId();
      const identity = { id, environmentId: scope.environmentId, scope: scope.scope };
      const stored = await storedValue(
        ctx,
        identity,
        { name: w.name, type: w.type, value: w.plaintext },
        "change",
      );
      return {
        id,
        name: w.name,
        type: w.type,
        value: stored.value,
        keyVersion: stored.keyVersion,
        existing: w.existing,
      };
    }),
  );
  const rows = (list: typeof sealed) => list.map((v) => [v.id, v.name, v.type, v.value, v.keyVersion]);
  const at = (i: number) => sql.raw(`json_extract(j.value, '$[${i}]')`);
  const creates = jsonChunks(rows(sealed.filter((v) => !v.existing))).map((json) =>
    db.insert(variables).select(
      // Columns in the table's order (src/db/core-tables.ts).
      sql`SELECT ${at(0)}, ${scope.projectId}, ${scope.environmentId}, ${scope.componentId}, ${scope.scope}, ${at(1)}, ${at(2)}, ${at(3)}, ${at(4)}, ${now}, ${now} FROM json_each(${json}) AS j`,
    ),
  );
  const updates = jsonChunks(rows(sealed.filter((v) => v.existing))).map((json) =>
    db
      .update(variables)
      .set({ type: sql`${at(2)}`, value: sql`${at(3)}`, keyVersion: sql`${at(4)}`, updatedAt: now })
      .from(sql`json_each(${json}) AS j`)
      .where(sql`${variables.id} = ${at(0)}`),
  );
  const deletes = jsonChunks(plan.deletes.map((row) => [row.id])).map((json) =>
    db
      .delete(variables)
      .where(sql`${variables.id} IN (SELECT json_extract(value, '$[0]') FROM json_each(${json}))`),
  );
  const changed = plan.changes.filter((c): c is VersionChange => c.action !== "unchanged");
  const history = plannedVersion(ctx, scope, version, changed, [
    ...sealed.map((v) => storedRow(v)),
    ...plan.deletes.map((row) => deletion(row.name)),
  ]);
  // Without its own entry when the change is part of another write that records itself (a new
  // environment's copied variables, API_CONTRACT §23): one request, one entry.
  const audit = opts.audit
    ? [
        auditEntry(ctx, {
          target: variableSetTarget(parent),
          projectId: scope.projectId,
          changes: Object.fromEntries(changed.map((c) => [c.name, { from: c.type.from, to: c.type.to }])),
        }),
      ]
    : [];
  // Deletes before creates: the organization's `variables` count (API_CONTRACT §29) is checked row by
  // row as the batch runs, so a change is counted net of the names it deletes. One that adds no more
  // names than it deletes adds nothing, and passes even while the organization is over a lowered
  // limit (whose row-by-row check would refuse its first new row): its rows run with the limit
  // lifted, inside its own batch, so no other statement ever sees it lifted.
  const netFree = creates.length > 0 && sealed.filter((v) => !v.existing).length <= plan.deletes.length;
  const [lift, lower] = netFree ? limitLifted(ctx, scope.projectId) : [];
  const rowsNet = lift && lower ? [lift, ...deletes, ...creates, lower] : [...deletes, ...creates];
  return [history.version, ...audit, ...rowsNet, ...updates, ...history.values] as const;
}

/** Far above any count a batch can reach: the `variables` limit while a net-free change runs. */
const LIFT = 1_000_000_000;

/** The statements that lift the project's organization's `variables` limit by LIFT, and lower it back. */
function limitLifted(ctx: ServiceContext, projectId: string) {
  const org = eq(orgLimits.orgId, sql`(SELECT org_id FROM projects WHERE id = ${projectId})`);
  const by = (delta: number) =>
    ctx.db
      .update(orgLimits)
      .set({ variablesLimit: sql`${orgLimits.variablesLimit} + ${delta}` })
      .where(org);
  return [by(LIFT), by(-LIFT)] as const;
}
