/**
 * Environments (API_CONTRACT §9, §23): listed, created, read, renamed and deleted by callers;
 * created by the engine too. Names are unique within a project regardless of case, for every
 * create and rename (the unique index on `name_key`: of two writers of one name, one wins).
 */
import { and, eq, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import { bindCompiled, bindQuery, compiled, tableReader } from "../../db/compiled";
import { insertRow } from "../../db/compiled-inserts";
import { compiledKeyset, type Page, type PageRequest, pageValues } from "../../db/pagination";
import { environments, projects, variables } from "../../db/schema";
import { badInput, conflict, isUniqueViolation, notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { nameKey } from "../../lib/name-key";
import { nowIso } from "../../lib/time";
import type { CreatedEnvironmentRecord, EnvironmentRecord } from "../../schemas/topology";
import type { EnvironmentCreateInput, EnvironmentUpdateInput } from "../../schemas/topology-writes";
import { authorizedLookup, projectLookup } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { guardedPage, lookupThen } from "../lookup";
import { ifMatchGuard, unchangedSince, writeLatest } from "../preconditions";
import { ENVIRONMENT_SET } from "../variables/parent";
import { planChange, planStatements, type Wanted } from "../variables/set-plan";
import { openValue } from "../variables/values";
import {
  type EnvironmentRow,
  environmentSelection,
  environmentStateStatement,
  readEnvironmentRecord,
  readEnvironmentState,
  toEnvironmentRecord,
} from "./record";

const nameTaken = (name: string) =>
  conflict(`An environment named "${name}" already exists in this project.`, [
    { path: "name", message: "Already taken (names are compared without regard to case)." },
  ]);

/** The environments of a project, behind the project's lookup, in one round trip. */
export function listProjectEnvironments(
  ctx: CallerContext,
  projectId: string,
  page: PageRequest,
): Promise<Page<EnvironmentRecord>> {
  const { db, identity } = ctx;
  const keys = compiledKeyset({ createdAt: environments.createdAt, id: environments.id }, page);
  const query = compiled(`project-environments:${keys.variant}`, (b) =>
    b
      .select(environmentSelection)
      .from(environments)
      .where(and(eq(environments.projectId, sql.placeholder("projectId")), keys.where))
      .orderBy(...keys.orderBy)
      .limit(keys.limit),
  );
  return guardedPage(
    db,
    projectLookup(db, identity, projectId, "read"),
    page,
    {
      statement: bindCompiled(db, query, { projectId, ...pageValues(page) }),
      read: (values) => {
        const record = readEnvironmentRecord(values);
        return { record, createdAt: record.created_at, id: record.id };
      },
    },
    (row) => row.record,
  );
}

/** One environment and its state, with the access check, in one round trip. */
export async function readEnvironment(ctx: CallerContext, id: string, action: "read" | "manage") {
  const { db, identity } = ctx;
  const {
    found: { row },
    results: [state],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, environments, id, action, "Environment"),
    environmentStateStatement(db, id),
  );
  return { row, state: readEnvironmentState(state[0]) };
}

export async function getEnvironment(ctx: CallerContext, id: string): Promise<EnvironmentRecord> {
  const { row, state } = await readEnvironment(ctx, id, "read");
  return toEnvironmentRecord(row, state);
}

const readVariable = tableReader(variables);

/**
 * `createEnvironment`: a new environment of a project (project `owner`), empty or starting with
 * a copy of another environment's own variables as its version 1 (§18), in one batch with its
 * audit entry.
 */
export async function createEnvironment(
  ctx: CallerContext,
  projectId: string,
  input: EnvironmentCreateInput,
): Promise<EnvironmentRecord> {
  const { db, identity } = ctx;
  const source = input.copy_variables_from;
  // The project's lookup and, to copy from, the source environment and its own variables: one round trip.
  const reads =
    source === undefined
      ? []
      : [
          bindQuery(
            db,
            db
              .select({ id: environments.id })
              .from(environments)
              .where(and(eq(environments.id, source), eq(environments.projectId, projectId))),
          ),
          bindQuery(
            db,
            db
              .select()
              .from(variables)
              .where(
                and(
                  eq(variables.environmentId, source),
                  eq(variables.projectId, projectId),
                  eq(variables.scope, ENVIRONMENT_SET),
                ),
              ),
          ),
        ];
  const {
    results: [found, sourceVariables = []],
  } = await lookupThen(db, projectLookup(db, identity, projectId, "manage"), ...reads);
  if (source !== undefined && found?.length === 0) {
    throw badInput("`copy_variables_from` must name another environment of this project.", [
      { path: "copy_variables_from", message: "Not an environment of this project." },
    ]);
  }
  const id = newId();
  const scope = { projectId, environmentId: id, componentId: null, scope: ENVIRONMENT_SET };
  const wanted: Wanted[] = sourceVariables.map((values) => {
    const row = readVariable(values);
    const sealedFor = { id: row.id, environmentId: row.environmentId, scope: row.scope };
    return { name: row.name, type: row.type, plaintext: () => openValue(ctx, sealedFor, row, "copy") };
  });
  const copy =
    wanted.length === 0
      ? []
      : await planStatements(
          ctx,
          { kind: "environment", id },
          scope,
          1,
          await planChange(ctx, [], wanted, "merge", (name) => name),
          { audit: false },
        );
  const now = nowIso();
  const row: EnvironmentRow = {
    id,
    projectId,
    name: input.name,
    nameKey: nameKey(input.name),
    createdAt: now,
    updatedAt: now,
  };
  const record = toEnvironmentRecord(row, { currentDeploymentId: null, configPending: false });
  try {
    await db.batch([
      insertRow(db, environments, row),
      auditEntry(ctx, {
        target: { type: "environment", id },
        projectId,
        changes: diffRecords(null, record),
      }),
      ...copy,
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
  return record;
}

/** The engine's `internalCreateEnvironment`: a new, empty environment, under the same name rule. */
export async function createEnvironmentInternal(
  ctx: ServiceContext,
  projectId: string,
  input: EnvironmentUpdateInput,
): Promise<CreatedEnvironmentRecord> {
  const { db } = ctx;
  const project = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).get();
  if (!project) throw notFound("Project");
  const now = nowIso();
  const row: EnvironmentRow = {
    id: newId(),
    projectId,
    name: input.name,
    nameKey: nameKey(input.name),
    createdAt: now,
    updatedAt: now,
  };
  const record = { id: row.id, project_id: projectId, name: row.name, created_at: now };
  try {
    // A project deleted between the check and the insert: the error boundary answers 404.
    await db.batch([
      insertRow(db, environments, row),
      auditEntry(ctx, {
        target: { type: "environment", id: row.id },
        projectId,
        changes: diffRecords(null, record),
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
  return record;
}

/** `updateEnvironment`: a rename (project `owner`), under If-Match when given. */
export async function updateEnvironment(
  ctx: CallerContext,
  id: string,
  input: EnvironmentUpdateInput,
): Promise<EnvironmentRecord> {
  const { db } = ctx;
  const { row: read, state } = await readEnvironment(ctx, id, "manage");
  const toRecord = (row: EnvironmentRow) => toEnvironmentRecord(row, state);
  const guard = await ifMatchGuard(ctx, read, toRecord);
  return writeLatest(
    db,
    environments,
    read,
    async (before) => {
      const set = { name: input.name, nameKey: nameKey(input.name), updatedAt: nowIso() };
      try {
        const [rows] = await db.batch([
          db
            .update(environments)
            .set(set)
            .where(and(eq(environments.id, id), unchangedSince(environments, before)))
            .returning(),
          auditEntry(ctx, {
            target: { type: "environment", id },
            projectId: before.projectId,
            changes: diffRecords(toRecord(before), toRecord({ ...before, ...set })),
          }),
        ]);
        const updated = rows[0];
        return updated ? toRecord(updated) : undefined;
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(input.name);
        throw err;
      }
    },
    { guard, what: "Environment" },
  );
}
