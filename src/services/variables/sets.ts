/**
 * Changing a whole scope at once (API_CONTRACT §18): `apply{Environment|Component}VariableChanges`
 * and `restore{Environment|Component}VariableVersion` (an export: ./export.ts).
 *
 * A change reads, in one round trip with the lookup that authorizes it, the scope's variables it
 * touches and its current version; plans itself (./set-plan.ts); and writes the plan as one D1
 * batch that makes the next version. When another change got there first, that version's key
 * refuses the batch, nothing is written, and the change is read and planned again (after a short
 * random wait, as `writeLatest` does): its answer, its version and its audit entry are exactly
 * the change it made. With `base_version`, a scope found at another version is `409 conflict`.
 */
import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindQuery, tableReader } from "../../db/compiled";
import { variables } from "../../db/schema";
import { conflict, isForeignKeyViolation, isUniqueViolation, notFound } from "../../errors";
import type { VariableChangeResult } from "../../schemas/variable-set";
import type { ChangeSet, VariableRestoreInput } from "../../schemas/variable-set-writes";
import { lookupThen } from "../lookup";
import { refuseBeyondLimit } from "../orgs/limits";
import { backOff, preconditionFailed, retries } from "../preconditions";
import { currentVersionQuery, stateAtQuery, type ValueRow } from "./history";
import { inVariableSet, parentLookup, type VariableParent, type VariableSet } from "./parent";
import {
  changesSomething,
  type Plan,
  planChange,
  planStatements,
  type VariableRow,
  type Wanted,
} from "./set-plan";
import { openValue, withoutParameters } from "./values";

const readVariable = tableReader(variables);
const readValueRow = (values: unknown[]): ValueRow => {
  const [name, type, value, keyVersion, sealedFor] = values as [
    string,
    ValueRow["type"],
    string | null,
    number | null,
    string | null,
  ];
  return { name, type, value, keyVersion, sealedFor };
};

type ScopeRead = { scope: VariableSet; current: VariableRow[]; version: number; state: ValueRow[] };

/**
 * Which of the scope's variables a change reads: those it names (merge), or all of them with the
 * values it may compare only: a replace's, of the names it gives; a restore's, of the names the
 * scope held at or before the version it restores (a name since created is only deleted). The
 * others are read by name and type, to be deleted: a scope's other values are never in memory.
 */
type Reading =
  | { names: readonly string[] }
  | { all: true; valuesOf: readonly string[] }
  | { all: true; valuesAt: number };

/**
 * One round trip: the parent's lookup (`action` on its project), the scope's variables (as
 * `reading` says), its current version, and (for a restore) its state right after `at`.
 */
async function readScope(
  ctx: CallerContext,
  parent: VariableParent,
  action: "write",
  reading: Reading,
  at?: number,
): Promise<ScopeRead> {
  const { db } = ctx;
  const listed = (names: readonly string[]) =>
    sql`${variables.name} IN (SELECT value FROM json_each(${JSON.stringify(names)}))`;
  const only: SQL = "names" in reading ? sql` AND ${listed(reading.names)}` : sql``;
  const valued: SQL | undefined =
    "valuesOf" in reading
      ? listed(reading.valuesOf)
      : "valuesAt" in reading
        ? sql`EXISTS (SELECT 1 FROM variable_version_values AS h WHERE h.environment_id = ${variables.environmentId} AND h.scope = ${variables.scope} AND h.name = ${variables.name} AND h.version <= ${reading.valuesAt})`
        : undefined;
  // A value not read is the empty string (columns in the table's order, as `readVariable` reads them).
  const columns = valued
    ? {
        ...getTableColumns(variables),
        value: sql<string>`CASE WHEN ${valued} THEN ${variables.value} ELSE '' END`.as("value"),
      }
    : getTableColumns(variables);
  const current = bindQuery(
    db,
    db
      .select(columns)
      .from(variables)
      .where(sql`${inVariableSet(variables, parent)}${only}`),
  );
  const statements = [current, currentVersionQuery(db, parent)] as const;
  const { found, results } = await lookupThen(
    db,
    parentLookup(db, ctx.identity, parent, action),
    ...statements,
    ...(at === undefined ? [] : [stateAtQuery(db, parent, at)]),
  );
  const [rows, version, state] = results as unknown as [unknown[][], unknown[][], unknown[][] | undefined];
  return {
    scope: found,
    current: rows.map((values) => readVariable(values)),
    version: Number(version[0]?.[0] ?? 0),
    state: (state ?? []).map(readValueRow),
  };
}

/**
 * Reads, plans and writes until the write lands (see the file comment). `want(read)` says what
 * the request wants of the scope as read; `check(read)` refuses it (base_version).
 */
async function changeScope(
  ctx: CallerContext,
  parent: VariableParent,
  reading: Reading,
  opts: {
    mode: "merge" | "replace";
    dryRun: boolean;
    at?: number;
    pathOf: (name: string) => string;
    check?: (read: ScopeRead) => void;
    want: (read: ScopeRead) => Wanted[];
  },
): Promise<VariableChangeResult> {
  const again = retries();
  for (let attempt = 1; ; attempt++) {
    const read = await readScope(ctx, parent, "write", reading, opts.at);
    opts.check?.(read);
    const plan: Plan = await planChange(ctx, read.current, opts.want(read), opts.mode, opts.pathOf);
    if (!changesSomething(plan))
      return { version: read.version, dry_run: opts.dryRun, changes: plan.changes };
    const version = read.version + 1;
    if (opts.dryRun) {
      // The same 409 the write would meet (API_CONTRACT §29): the names it adds, net of those it deletes.
      const added = plan.writes.filter((w) => !w.existing).length - plan.deletes.length;
      if (ctx.identity) await refuseBeyondLimit(ctx, ctx.identity.orgId, "variables", added);
      return { version, dry_run: true, changes: plan.changes };
    }
    const [first, ...rest] = await planStatements(ctx, parent, read.scope, version, plan);
    try {
      await ctx.db.batch([first, ...rest]);
      return { version, dry_run: false, changes: plan.changes };
    } catch (err) {
      // Another change took this version (or a name) first: nothing was written; plan again.
      // A parent deleted meanwhile: the error boundary answers 404 (API_CONTRACT §17).
      if (!isUniqueViolation(err)) throw isForeignKeyViolation(err) ? err : withoutParameters(err);
      if (!again(attempt))
        throw conflict("The scope kept changing while this change was applied; try again.");
      await backOff(attempt);
    }
  }
}

const staleBase = (base: number, current: number) =>
  conflict(`The scope is at version ${current}, not ${base}; nothing changed.`, [
    { path: "base_version", message: `The scope's current version is ${current}.` },
  ]);

/** The `applyEnvironmentVariableChanges` and `applyComponentVariableChanges` operations. */
export function applyVariableChanges(
  ctx: CallerContext,
  parent: VariableParent,
  input: ChangeSet,
): Promise<VariableChangeResult> {
  const names = input.changes.map((c) => c.name);
  const reading: Reading = input.mode === "replace" ? { all: true, valuesOf: names } : { names };
  return changeScope(ctx, parent, reading, {
    mode: input.mode,
    dryRun: input.dryRun,
    pathOf: (name) => input.pathOf.get(name) ?? `variables.${name}`,
    check: (read) => {
      // A scope's only representation with an ETag is its list, whose tag is weak: a strong
      // comparison never matches it (RFC 9110 §13.1.1). Its precondition is `base_version`.
      if (Array.isArray(ctx.ifMatch)) throw preconditionFailed();
      if (input.baseVersion !== undefined && input.baseVersion !== read.version) {
        throw staleBase(input.baseVersion, read.version);
      }
    },
    want: () =>
      input.changes.map(({ name, entry }) => ({
        name,
        type: entry?.type ?? null,
        plaintext: async () => entry?.value ?? "",
      })),
  });
}

/** The `restoreEnvironmentVariableVersion` and `restoreComponentVariableVersion` operations. */
export function restoreVariableVersion(
  ctx: CallerContext,
  parent: VariableParent,
  version: number,
  input: VariableRestoreInput,
): Promise<VariableChangeResult> {
  const reading: Reading = { all: true, valuesAt: version };
  return changeScope(ctx, parent, reading, {
    mode: "replace",
    dryRun: input.dry_run ?? false,
    at: version,
    pathOf: (name) => name,
    check: (read) => {
      if (version > read.version) throw notFound(`Version ${version} of this scope`);
    },
    want: (read) =>
      read.state.flatMap((row): Wanted[] => {
        const { type, value } = row;
        if (type === null || value === null) return [];
        // Opened with the identity it was sealed for (a variable since deleted, or renamed).
        const identity = {
          id: row.sealedFor ?? "",
          environmentId: read.scope.environmentId,
          scope: read.scope.scope,
        };
        return [
          {
            name: row.name,
            type,
            stored: row,
            plaintext: () => openValue(ctx, identity, { type, value, keyVersion: row.keyVersion }, "restore"),
          },
        ];
      }),
  });
}
