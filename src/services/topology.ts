/** Environments, components and stacks: created by the engine through the internal API. */

import { eq } from "drizzle-orm";
import type { ServiceContext } from "../context";
import type { Db } from "../db/client";
import { components, environments, projects, stacks } from "../db/schema";
import { notFound } from "../errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type {
  ComponentRecord,
  EnvironmentRecord,
  NameInput,
  StackCreateInput,
  StackRecord,
} from "../schemas/topology";
import { auditEntry, diffRecords } from "./audit/entry";

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

function toEnvironmentRecord(row: typeof environments.$inferSelect): EnvironmentRecord {
  return { id: row.id, project_id: row.projectId, name: row.name, created_at: row.createdAt };
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

/** The engine's `internalCreateEnvironment`: a new environment of a project. */
export async function createEnvironment(
  ctx: ServiceContext,
  projectId: string,
  input: NameInput,
): Promise<EnvironmentRecord> {
  const { db } = ctx;
  const project = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).get();
  if (!project) throw notFound("Project");
  const row = { id: newId(), projectId, name: input.name, createdAt: nowIso() };
  const record = toEnvironmentRecord(row);
  // A project deleted between the check and the insert: the error boundary answers 404.
  await db.batch([db.insert(environments).values(row), created(ctx, "environment", projectId, record)]);
  return record;
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
  await db.batch([db.insert(components).values(row), created(ctx, "component", projectId, record)]);
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
  await db.batch([db.insert(stacks).values(row), created(ctx, "stack", projectId, record)]);
  return record;
}
