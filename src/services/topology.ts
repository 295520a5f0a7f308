/** Environments, components and stacks: created by the engine through the internal API. */

import { eq } from "drizzle-orm";
import type { ServiceContext } from "../context";
import type { Db } from "../db/client";
import { components, environments, projects, stacks } from "../db/schema";
import { notFound } from "../errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type { ComponentRecord, EnvironmentRecord, StackRecord } from "../schemas/topology";
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

export async function createEnvironment(
  ctx: ServiceContext,
  projectId: string,
  name: string,
): Promise<EnvironmentRecord> {
  const { db } = ctx;
  const project = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).get();
  if (!project) throw notFound("Project");
  const row = { id: newId(), projectId, name, createdAt: nowIso() };
  const record: EnvironmentRecord = { id: row.id, project_id: projectId, name, created_at: row.createdAt };
  // A project deleted between the check and the insert: the error boundary answers 404.
  await db.batch([db.insert(environments).values(row), created(ctx, "environment", projectId, record)]);
  return record;
}

export async function createComponent(
  ctx: ServiceContext,
  environmentId: string,
  name: string,
): Promise<ComponentRecord> {
  const { db } = ctx;
  const projectId = await environmentProject(db, environmentId);
  const row = { id: newId(), projectId, environmentId, name, createdAt: nowIso() };
  const record: ComponentRecord = {
    id: row.id,
    environment_id: environmentId,
    name,
    created_at: row.createdAt,
  };
  await db.batch([db.insert(components).values(row), created(ctx, "component", projectId, record)]);
  return record;
}

export async function createStack(
  ctx: ServiceContext,
  environmentId: string,
  input: { name: string; template_id?: string | undefined },
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
  const record: StackRecord = {
    id: row.id,
    environment_id: environmentId,
    name: row.name,
    template_id: row.templateId,
    created_at: row.createdAt,
  };
  await db.batch([db.insert(stacks).values(row), created(ctx, "stack", projectId, record)]);
  return record;
}
