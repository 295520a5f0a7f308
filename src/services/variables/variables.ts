/**
 * Variables (SPEC.md "Variables", API_CONTRACT §3 "Variable", §4, §5).
 *
 * A variable belongs to a component (scope = component id) or to an environment
 * (component_id null, scope "_"); names are unique per (environment, scope), enforced by the
 * unique index alone so that concurrent creates cannot both win. `secret` and `secure_string`
 * values are stored only as AES-GCM envelopes (src/crypto/variables.ts); `string` values are
 * plaintext by contract. The value is never part of a record, a list, an error or a log line.
 */

import { and, eq } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindQuery, rowReader } from "../../db/compiled";
import { insertRow } from "../../db/compiled-inserts";
import { keyset, type Page, type PageRequest } from "../../db/pagination";
import { type VariableType, type VersionChange, variables } from "../../db/schema";
import { assertEchoMatches, conflict, isForeignKeyViolation, isUniqueViolation } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { VariableRecord } from "../../schemas/variable";
import type { VariableReplaceInput, VariableWriteInput } from "../../schemas/variable-writes";
import { loadAuthorized } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { guardedPage } from "../lookup";
import { deleteLatest, ifMatchGuard, unchangedSince, writeLatest } from "../preconditions";
import { createdChange, deletedChange, deletion, followingVersion, storedRow } from "./history";
import { ENVIRONMENT_SET, loadParent, parentLookup, type VariableParent } from "./parent";
import { countsAsChanged, holdsValue, storedValue, withoutParameters } from "./values";

/** Every column but the value: records and lists never read it. */
const RECORD_COLUMNS = {
  id: variables.id,
  projectId: variables.projectId,
  environmentId: variables.environmentId,
  componentId: variables.componentId,
  name: variables.name,
  type: variables.type,
  createdAt: variables.createdAt,
  updatedAt: variables.updatedAt,
};
const readRecordColumns = rowReader(RECORD_COLUMNS);

type RecordRow = {
  id: string;
  projectId: string;
  environmentId: string;
  componentId: string | null;
  name: string;
  type: VariableType;
  createdAt: string;
  updatedAt: string;
};

export function toVariableRecord(row: RecordRow): VariableRecord {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    environment_id: row.environmentId,
    component_id: row.componentId,
    resource_id: `/${row.projectId}/${row.environmentId}/${row.componentId ?? ENVIRONMENT_SET}/${row.name}`,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const nameTaken = (name: string) =>
  conflict(`A variable named "${name}" already exists in this scope.`, [
    { path: "name", message: "Already taken in this scope (names are case-sensitive)." },
  ]);

export function createComponentVariable(
  ctx: CallerContext,
  componentId: string,
  input: VariableWriteInput,
): Promise<VariableRecord> {
  return createVariable(ctx, { kind: "component", id: componentId }, input);
}

export function createEnvironmentVariable(
  ctx: CallerContext,
  environmentId: string,
  input: VariableWriteInput,
): Promise<VariableRecord> {
  return createVariable(ctx, { kind: "environment", id: environmentId }, input);
}

async function createVariable(
  ctx: CallerContext,
  parent: VariableParent,
  input: VariableWriteInput,
): Promise<VariableRecord> {
  const { db, identity } = ctx;
  const scope = await loadParent(db, identity, parent, "write");
  const id = newId();
  const stored = await storedValue(
    ctx,
    { id, environmentId: scope.environmentId, scope: scope.scope },
    input,
    "create",
  );
  const now = nowIso();
  const row = {
    id,
    projectId: scope.projectId,
    environmentId: scope.environmentId,
    componentId: scope.componentId,
    scope: scope.scope,
    name: input.name,
    type: input.type,
    value: stored.value,
    keyVersion: stored.keyVersion,
    createdAt: now,
    updatedAt: now,
  };
  const record = toVariableRecord(row);
  try {
    await db.batch([
      insertRow(db, variables, row),
      ...followingVersion(ctx, scope, [createdChange(row)], [storedRow(row)]),
      auditEntry(ctx, {
        target: { type: "variable", id },
        projectId: scope.projectId,
        changes: diffRecords(null, record),
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    // A parent deleted between the lookup and the insert: the error boundary answers 404.
    if (isForeignKeyViolation(err)) throw err;
    throw withoutParameters(err);
  }
  return record;
}

export async function getVariable(ctx: CallerContext, variableId: string): Promise<VariableRecord> {
  const { db, identity } = ctx;
  const { row } = await loadAuthorized(db, identity, variables, variableId, "read", "Variable");
  return toVariableRecord(row);
}

/**
 * A full replace: name, type and value; the variable keeps its id, scope and created_at.
 * Read-only fields the client echoed from the record change nothing and must match it: a
 * replace never moves a variable.
 */
export async function replaceVariable(
  ctx: CallerContext,
  variableId: string,
  body: VariableReplaceInput,
): Promise<VariableRecord> {
  const { db, identity } = ctx;
  const { name, type, value, ...echoed } = body;
  const input: VariableWriteInput = { name, type, value };
  assertEchoMatches(echoed, { id: variableId });
  const { row } = await loadAuthorized(db, identity, variables, variableId, "write", "Variable");
  assertEchoMatches(echoed, { environment_id: row.environmentId, component_id: row.componentId });
  const guard = await ifMatchGuard(ctx, row, toVariableRecord);
  // Its id, environment and scope never change: the value is sealed once.
  const stored = await storedValue(
    ctx,
    { id: row.id, environmentId: row.environmentId, scope: row.scope },
    input,
    "replace",
  );
  // Applied to the variable as it is when the write lands, so the entry's `from` is what it
  // replaced (`writeLatest`); gone meanwhile (or its project) is 404.
  return writeLatest(
    db,
    variables,
    row,
    async (before) => {
      const set = {
        name: input.name,
        type: input.type,
        value: stored.value,
        keyVersion: stored.keyVersion,
        updatedAt: nowIso(),
      };
      const version = await replacedVersion(ctx, before, { ...before, ...set }, input.value);
      let rows: RecordRow[];
      try {
        [rows] = await db.batch([
          db
            .update(variables)
            .set(set)
            .where(and(eq(variables.id, before.id), unchangedSince(variables, before)))
            .returning(RECORD_COLUMNS),
          ...version,
          auditEntry(ctx, {
            target: { type: "variable", id: before.id },
            projectId: before.projectId,
            // The record's fields only: the value is never in an entry.
            changes: diffRecords(toVariableRecord(before), toVariableRecord({ ...before, ...set })),
          }),
        ]);
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(input.name);
        throw withoutParameters(err);
      }
      return rows[0] ? toVariableRecord(rows[0]) : undefined;
    },
    { guard, what: "Variable" },
  );
}

export async function deleteVariable(ctx: CallerContext, variableId: string): Promise<void> {
  const { db, identity } = ctx;
  const { row } = await loadAuthorized(db, identity, variables, variableId, "write", "Variable");
  const guard = await ifMatchGuard(ctx, row, toVariableRecord);
  await deleteLatest(
    ctx,
    variables,
    row,
    (before) => ({
      target: { type: "variable", id: variableId },
      projectId: before.projectId,
      changes: diffRecords(toVariableRecord(before), null),
    }),
    {
      guard,
      what: "Variable",
      follow: (before) => followingVersion(ctx, before, [deletedChange(before)], [deletion(before.name)]),
    },
  );
}

type VariableRow = typeof variables.$inferSelect;

/**
 * The version a replace makes, to follow its update in the batch: a renamed variable deletes its
 * old name and creates the new one; a kept name is updated; nothing when name, type and value
 * all stay as they were (the update still writes `updated_at`, as it always did), which a key
 * without `variables:reveal` is never told of a sealed value (`countsAsChanged`).
 */
async function replacedVersion(
  ctx: CallerContext,
  before: VariableRow,
  after: VariableRow,
  plaintext: string,
) {
  if (before.name !== after.name) {
    return followingVersion(
      ctx,
      before,
      [deletedChange(before), createdChange(after)],
      [deletion(before.name), storedRow(after)],
    );
  }
  const identity = { id: before.id, environmentId: before.environmentId, scope: before.scope };
  const sameValue =
    !countsAsChanged(ctx, before.type, after.type) && (await holdsValue(ctx, identity, before, plaintext));
  if (sameValue && before.type === after.type) return [];
  const change: VersionChange = {
    name: after.name,
    action: "updated",
    type: { from: before.type, to: after.type },
    value_changed: !sameValue,
  };
  return followingVersion(ctx, before, [change], [storedRow(after)]);
}

export function listComponentVariables(
  ctx: CallerContext,
  componentId: string,
  page: PageRequest,
): Promise<Page<VariableRecord>> {
  return listVariables(ctx, { kind: "component", id: componentId }, page);
}

/** The environment's own variables (component_id null), not its components'. */
export function listEnvironmentVariables(
  ctx: CallerContext,
  environmentId: string,
  page: PageRequest,
): Promise<Page<VariableRecord>> {
  return listVariables(ctx, { kind: "environment", id: environmentId }, page);
}

/**
 * A component's own variables, or an environment's own (component_id null) variables.
 * One round trip: the parent with the access check, and one keyset page from its index.
 */
async function listVariables(
  ctx: CallerContext,
  parent: VariableParent,
  page: PageRequest,
): Promise<Page<VariableRecord>> {
  const { db, identity } = ctx;
  const { where, orderBy } = keyset({ createdAt: variables.createdAt, id: variables.id }, page);
  // An environment's own variables: the parent is the environment (its lookup checks that).
  const inVariableSet =
    parent.kind === "component"
      ? eq(variables.componentId, parent.id)
      : and(eq(variables.environmentId, parent.id), eq(variables.scope, ENVIRONMENT_SET));
  const query = db
    .select(RECORD_COLUMNS)
    .from(variables)
    .where(and(inVariableSet, where))
    .orderBy(...orderBy)
    .limit(page.limit + 1);
  return guardedPage(
    db,
    parentLookup(db, identity, parent, "read"),
    page,
    { statement: bindQuery(db, query), read: readRecordColumns },
    toVariableRecord,
  );
}
