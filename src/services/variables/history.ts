/**
 * A scope's versions (API_CONTRACT §18): writing them beside each change, and a scope's state at
 * one (the records of its versions: ./versions.ts).
 *
 * Every change to a scope's variables makes one version, numbered 1, 2, 3… per scope without a
 * gap, in the same D1 batch (one transaction) as the change: the version row (who, when, which
 * names, never a value) and one value row per name it created, updated or deleted, holding the
 * value exactly as the variable row holds it (./values.ts: the same envelope, sealed for the same
 * variable). A single-variable write numbers its version in SQL, from the scope's latest version
 * as the batch finds it; a change of a whole scope plans its number from the version it read,
 * and the primary key refuses it if another change got there first (./sets.ts plans again).
 * D1 runs one batch at a time, so neither way can skip or reuse a number.
 */
import { type SQL, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { bindQuery } from "../../db/compiled";
import {
  type VariableType,
  type VersionChange,
  variableVersionParts,
  variableVersions,
  variableVersionValues,
} from "../../db/schema";
import { type Spilled, spill } from "../../db/spill";
import { inGroups } from "../../lib/groups";
import { nowIso } from "../../lib/time";
import { ENVIRONMENT_SET, inVariableSet, type VariableParent, type VariableSet } from "./parent";

/** A name's value as one version left it: as the variable row stored it, or a deletion (`type` null). */
export type ValueRow = {
  name: string;
  type: VariableType | null;
  value: string | null;
  keyVersion: number | null;
  /** The variable the envelope was sealed for (its additional data), null for plaintext or a deletion. */
  sealedFor: string | null;
};

export const deletion = (name: string): ValueRow => ({
  name,
  type: null,
  value: null,
  keyVersion: null,
  sealedFor: null,
});

/** The value row of a variable as its row stores it. */
export const storedRow = (v: {
  id: string;
  name: string;
  type: VariableType;
  value: string;
  keyVersion: number | null;
}): ValueRow => ({
  name: v.name,
  type: v.type,
  value: v.value,
  keyVersion: v.keyVersion,
  sealedFor: v.type === "string" ? null : v.id,
});

export const createdChange = (v: { name: string; type: VariableType }): VersionChange => ({
  name: v.name,
  action: "created",
  type: { from: null, to: v.type },
  value_changed: true,
});
export const deletedChange = (v: { name: string; type: VariableType }): VersionChange => ({
  name: v.name,
  action: "deleted",
  type: { from: v.type, to: null },
  value_changed: true,
});

/** Each change by name (code unit order: names are ASCII), as a version record lists them. */
export const byName = <T extends { name: string }>(list: T[]): T[] =>
  [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const scopeVersions = (scope: VariableSet) =>
  sql`SELECT max(version) FROM variable_versions WHERE environment_id = ${scope.environmentId} AND scope = ${scope.scope}`;

/**
 * At most this much JSON per statement of value rows: D1 refuses a value over 2,000,000 bytes,
 * and a change's values (1 MiB of request body, their envelopes a third larger) may not fit one.
 */
const ROWS_JSON_MAX = 500_000;

/** Rows as JSON arrays, in chunks that each fit one bound parameter. */
export const jsonChunks = (rows: unknown[][]): string[] =>
  inGroups(
    rows.map((row) => JSON.stringify(row)),
    (text) => text.length + 1,
    ROWS_JSON_MAX,
  ).map((texts) => `[${texts.join(",")}]`);

/** Only when the statement before it in the batch changed a row (a single-variable write's version). */
const AFTER_A_CHANGE = sql` WHERE changes() > 0`;

/**
 * A version's `created_at`: now, or the scope's latest version's if that is later (a request that
 * read the clock first may land second), so that `created_at` order is version order (§18).
 * Timestamps all have one width: text order is time order.
 */
function createdAt(scope: VariableSet): SQL {
  const now = nowIso();
  // The latest version's is the latest of all (by this very rule): one step down the key's index.
  const latest = sql`SELECT created_at FROM variable_versions WHERE environment_id = ${scope.environmentId} AND scope = ${scope.scope} ORDER BY version DESC LIMIT 1`;
  return sql`max(${now}, coalesce((${latest}), ${now}))`;
}

function versionInsert(
  ctx: ServiceContext,
  scope: VariableSet,
  version: SQL,
  changes: Spilled,
  condition: SQL,
) {
  const identity = ctx.identity;
  // Columns in the table's order (src/db/variable-history-tables.ts); spilled changes are `[]` here.
  const spilled = changes.inline === null ? changes.length : null;
  return ctx.db
    .insert(variableVersions)
    .select(
      sql`SELECT ${scope.projectId}, ${scope.environmentId}, ${scope.componentId}, ${scope.scope}, ${version}, ${identity ? "api_key" : "admin"}, ${identity?.accountId ?? null}, ${identity?.keyId ?? null}, ${ctx.requestId}, ${changes.inline ?? "[]"}, ${createdAt(scope)}, ${spilled}${condition}`,
    );
}

/** A version's `changes` as stored: in its row, or too large for one, in parts (../../db/spill.ts). */
const storedChanges = (changes: VersionChange[]): Spilled => spill(JSON.stringify(byName(changes)));

/** The parts of a planned version's spilled `changes`, in its batch after the version's row. */
function partInserts(db: Db, scope: VariableSet, version: number, changes: Spilled) {
  return changes.parts.map((chunk, part) =>
    db.insert(variableVersionParts).values({
      projectId: scope.projectId,
      environmentId: scope.environmentId,
      scope: scope.scope,
      version,
      part,
      chunk,
    }),
  );
}

function valueInserts(db: Db, scope: VariableSet, version: SQL, rows: ValueRow[], condition: SQL) {
  const values = rows.map((r) => [r.name, r.type, r.value, r.keyVersion, r.sealedFor]);
  return jsonChunks(values).map((json) =>
    db
      .insert(variableVersionValues)
      .select(
        sql`SELECT ${scope.projectId}, ${scope.environmentId}, ${scope.componentId}, ${scope.scope}, json_extract(j.value, '$[0]'), ${version}, json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]') FROM json_each(${json}) AS j${condition}`,
      ),
  );
}

/**
 * The version a single-variable write makes: to follow its write in the batch, each statement
 * applying only when the one before it changed a row (so a write that matched nothing makes no
 * version), numbered after the scope's latest. The audit entry comes after these (its own
 * condition then holds exactly when the version was made).
 */
export function followingVersion(
  ctx: ServiceContext,
  scope: VariableSet,
  changes: VersionChange[],
  rows: ValueRow[],
) {
  const stored = storedChanges(changes);
  // One variable's change: a line or two, never near a row's limit.
  if (stored.inline === null) throw new Error("a single-variable version's changes outgrew its row");
  return [
    versionInsert(ctx, scope, sql`coalesce((${scopeVersions(scope)}), 0) + 1`, stored, AFTER_A_CHANGE),
    ...valueInserts(ctx.db, scope, sql`(${scopeVersions(scope)})`, rows, AFTER_A_CHANGE),
  ] as const;
}

/** The version `version` of a planned change (./sets.ts): refused by the key if it is taken. */
export function plannedVersion(
  ctx: ServiceContext,
  scope: VariableSet,
  version: number,
  changes: VersionChange[],
  rows: ValueRow[],
) {
  const stored = storedChanges(changes);
  return {
    version: versionInsert(ctx, scope, sql`${version}`, stored, sql``),
    values: [
      ...valueInserts(ctx.db, scope, sql`${version}`, rows, sql``),
      ...partInserts(ctx.db, scope, version, stored),
    ],
  };
}

/** The scope's current version (0 before its first change), for a batch beside the parent's lookup. */
export const currentVersionQuery = (db: Db, parent: VariableParent) =>
  bindQuery(
    db,
    db
      .select({ current: sql<number>`coalesce(max(${variableVersions.version}), 0)`.as("current_version") })
      .from(variableVersions)
      .where(inVariableSet(variableVersions, parent)),
  );

/**
 * The scope as it was right after `version`: per name, its latest value row at or below it
 * (SQLite takes the bare columns from the row that holds the max), deletions included.
 */
export const stateAtQuery = (db: Db, parent: VariableParent, version: number) =>
  bindQuery(db, stateAtSelect(db, parent, version));

/** `stateAtQuery`'s query, apart so that its plan can be tested. */
export const stateAtSelect = (db: Db, parent: VariableParent, version: number) =>
  variableSetsAtSelect(
    db,
    environmentOf(parent),
    pinRows([{ scope: parent.kind === "component" ? parent.id : ENVIRONMENT_SET, version }]),
  );

/** The environment of a parent's scope, for a statement that cannot wait for its lookup (`inVariableSet`). */
const environmentOf = (parent: VariableParent): SQL =>
  parent.kind === "component"
    ? sql`(SELECT environment_id FROM components WHERE id = ${parent.id})`
    : sql`${parent.id}`;

/** A scope of an environment (its `scope` key, as ./scope.ts names them) and a version of it. */
export type VersionPin = { scope: string; version: number };

/** Pins as the rows `variableSetsAtSelect` joins: (scope, version), from one bound JSON list. */
export const pinRows = (pins: readonly VersionPin[]): SQL =>
  sql`SELECT json_extract(value, '$.scope') AS scope, json_extract(value, '$.version') AS version FROM json_each(${JSON.stringify(pins)})`;

/**
 * Which values a read of pinned scopes brings into memory: all of them (a restore, the engine's
 * configuration), those of `string` variables only (a diff compares those; a sealed value's change
 * is told by the version that wrote it), or none (names and types). A value not read is the empty
 * string; a deletion's stays null.
 */
export type ValuesRead = "all" | "strings" | "none";

const VALUES_READ: Record<ValuesRead, SQL.Aliased<string | null>> = {
  all: sql<string | null>`${variableVersionValues.value}`.as("value"),
  strings: sql<
    string | null
  >`CASE WHEN ${variableVersionValues.type} = 'string' OR ${variableVersionValues.type} IS NULL THEN ${variableVersionValues.value} ELSE '' END`.as(
    "value",
  ),
  none: sql<
    string | null
  >`CASE WHEN ${variableVersionValues.type} IS NULL THEN ${variableVersionValues.value} ELSE '' END`.as(
    "value",
  ),
};

/**
 * Scopes of one environment as each was right after its version (a restore's one scope, §18; a
 * deployment's pinned configuration, §24): per scope and name, its latest value row at or below
 * the scope's version, deletions included. `pins` is a query of (scope, version) rows: a bound list
 * (`pinRows`), or one the database reads in the same statement (a deployment's `config`). One
 * statement whatever the number of scopes.
 *
 * Its cost follows the names, not the history: the scope's names are walked one index seek each
 * (`namesOfPins`), and each name's row is one seek to its latest version at or below the pin. A
 * GROUP BY over every row at or below the pin would read each name's whole history: a scope of
 * 500 versions that each rewrote its 20 names read 10,000 rows to answer 20 (bench/README.md,
 * "Part four").
 */
export const variableSetsAtSelect = (db: Db, environment: SQL, pins: SQL, values: ValuesRead = "all") =>
  db
    .select({
      name: variableVersionValues.name,
      type: variableVersionValues.type,
      value: VALUES_READ[values],
      keyVersion: variableVersionValues.keyVersion,
      sealedFor: variableVersionValues.sealedFor,
      at: sql<number>`${variableVersionValues.version}`.as("at_version"),
      scope: variableVersionValues.scope,
    })
    // CROSS JOIN: SQLite keeps that order (the names, then one seek each), which its planner
    // would otherwise turn around for some pins (walking every row of the environment instead).
    .from(sql`(${namesOfPins(environment, pins)}) AS pin`)
    .crossJoin(variableVersionValues)
    .where(
      sql`${variableVersionValues.environmentId} = ${environment} AND ${variableVersionValues.scope} = pin.scope AND ${variableVersionValues.name} = pin.name AND ${variableVersionValues.version} = (SELECT max(w.version) FROM variable_version_values AS w WHERE w.environment_id = ${environment} AND w.scope = pin.scope AND w.name = pin.name AND w.version <= pin.version)`,
    );

/**
 * The values `names` held in one scope right after `version`, by name: each one seek to its latest
 * value row at or below the version, as `variableSetsAtSelect` finds each (an export's page,
 * ./sets.ts). A name the history does not hold at the version is missing from the answer.
 */
export const namedValuesAtSelect = (db: Db, scope: VariableSet, version: number, names: readonly string[]) =>
  db
    .select({
      name: variableVersionValues.name,
      type: variableVersionValues.type,
      value: variableVersionValues.value,
      keyVersion: variableVersionValues.keyVersion,
      sealedFor: variableVersionValues.sealedFor,
    })
    .from(sql`json_each(${JSON.stringify(names)}) AS pin`)
    .crossJoin(variableVersionValues)
    .where(
      sql`${variableVersionValues.environmentId} = ${scope.environmentId} AND ${variableVersionValues.scope} = ${scope.scope} AND ${variableVersionValues.name} = pin.value AND ${variableVersionValues.version} = (SELECT max(w.version) FROM variable_version_values AS w WHERE w.environment_id = ${scope.environmentId} AND w.scope = ${scope.scope} AND w.name = pin.value AND w.version <= ${version})`,
    )
    .orderBy(variableVersionValues.name);

/**
 * Every name each pinned scope's history holds, with the pin's version: (scope, version, name)
 * rows, each name found by one seek of the key past the one before (the smallest name after it),
 * in name order within a scope. A name whose first row is after the pin is dropped by the join.
 */
const namesOfPins = (environment: SQL, pins: SQL): SQL =>
  sql`WITH RECURSIVE pinned AS (${pins}), named(scope, version, name) AS (SELECT scope, version, (SELECT min(v.name) FROM variable_version_values AS v WHERE v.environment_id = ${environment} AND v.scope = pinned.scope) FROM pinned UNION ALL SELECT scope, version, (SELECT min(v.name) FROM variable_version_values AS v WHERE v.environment_id = ${environment} AND v.scope = named.scope AND v.name > named.name) FROM named WHERE name IS NOT NULL) SELECT scope, version, name FROM named WHERE name IS NOT NULL`;
