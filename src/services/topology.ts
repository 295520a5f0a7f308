/**
 * Components and stacks (API_CONTRACT §9, §23): created by the engine through the internal API,
 * listed and read by callers. Environments are ./environments/.
 */

import { eq } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../context";
import type { Db } from "../db/client";
import { insertRow } from "../db/compiled-inserts";
import { type Page, type PageRequest, tablePage } from "../db/pagination";
import { components, environments, stacks } from "../db/schema";
import { notFound } from "../errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type { ComponentRecord, StackRecord } from "../schemas/topology";
import type { NameInput, StackCreateInput } from "../schemas/topology-writes";
import { authorizedLookup, loadAuthorized } from "./access";
import { auditEntry, diffRecords } from "./audit/entry";
import { guardedPage } from "./lookup";

async function environmentProject(db: Db, environmentId: string): Promise<string> {
  const env = await db
    .select({ projectId: environments.projectId })
    .from(environments)
    .where(eq(environments.id, environmentId))
    .get();
  if (!env) throw notFound("Environment");
  return env.projectId;
}

/** The audit entry of a create: the new record, field by field. */
function created(ctx: ServiceContext, type: string, projectId: string, record: { id: string }) {
  return auditEntry(ctx, { target: { type, id: record.id }, projectId, changes: diffRecords(null, record) });
}

function toComponentRecord(row: typeof components.$inferSelect): ComponentRecord {
  return { id: row.id, environment_id: row.environmentId, name: row.name, created_at: row.createdAt };
}

function toStackRecord(row: typeof stacks.$inferSelect): StackRecord {
  return {
    id: row.id,
    environment_id: row.environmentId,
    name: row.name,
    template_id: row.templateId,
    created_at: row.createdAt,
  };
}

/** The engine's `internalCreateComponent`: a new component of an environment. */
export async function createComponent(
  ctx: ServiceContext,
  environmentId: string,
  input: NameInput,
): Promise<ComponentRecord> {
  const { db } = ctx;
  const projectId = await environmentProject(db, environmentId);
  const row = { id: newId(), projectId, environmentId, name: input.name, createdAt: nowIso() };
  const record = toComponentRecord(row);
  await db.batch([insertRow(db, components, row), created(ctx, "component", projectId, record)]);
  return record;
}

/** The engine's `internalCreateStack`: a new stack of an environment; a template name of its own unless given. */
export async function createStack(
  ctx: ServiceContext,
  environmentId: string,
  input: StackCreateInput,
): Promise<StackRecord> {
  const { db } = ctx;
  const projectId = await environmentProject(db, environmentId);
  const row = {
    id: newId(),
    projectId,
    environmentId,
    name: input.name,
    templateId: input.template_id ?? newId(),
    createdAt: nowIso(),
  };
  const record = toStackRecord(row);
  await db.batch([insertRow(db, stacks, row), created(ctx, "stack", projectId, record)]);
  return record;
}

/** `listEnvironmentComponents`: behind the environment's lookup, in one round trip. */
export function listEnvironmentComponents(
  ctx: CallerContext,
  environmentId: string,
  page: PageRequest,
): Promise<Page<ComponentRecord>> {
  const { db, identity } = ctx;
  return guardedPage(
    db,
    authorizedLookup(db, identity, environments, environmentId, "read", "Environment"),
    page,
    tablePage(db, components, [[components.environmentId, environmentId]], page),
    toComponentRecord,
  );
}

export async function getComponent(ctx: CallerContext, id: string): Promise<ComponentRecord> {
  const { row } = await loadAuthorized(ctx.db, ctx.identity, components, id, "read", "Component");
  return toComponentRecord(row);
}

/** `listEnvironmentStacks`: behind the environment's lookup, in one round trip. */
export function listEnvironmentStacks(
  ctx: CallerContext,
  environmentId: string,
  page: PageRequest,
): Promise<Page<StackRecord>> {
  const { db, identity } = ctx;
  return guardedPage(
    db,
    authorizedLookup(db, identity, environments, environmentId, "read", "Environment"),
    page,
    tablePage(db, stacks, [[stacks.environmentId, environmentId]], page),
    toStackRecord,
  );
}

export async function getStack(ctx: CallerContext, id: string): Promise<StackRecord> {
  const { row } = await loadAuthorized(ctx.db, ctx.identity, stacks, id, "read", "Stack");
  return toStackRecord(row);
}
