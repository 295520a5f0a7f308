/** A project record (API_CONTRACT §3 "Project"): its row, how a row is read and shaped. */
import { getTableColumns } from "drizzle-orm";
import { rowReader } from "../../db/compiled";
import { projects } from "../../db/schema";
import type { ProjectRecord } from "../../schemas/project";

export type ProjectRow = typeof projects.$inferSelect;

export function toProjectRecord(row: ProjectRow): ProjectRecord {
  return {
    id: row.id,
    org_id: row.orgId,
    name: row.name,
    description: row.description,
    icon: row.icon,
    repo_id: row.repoId,
    default_environment_id: row.defaultEnvironmentId,
    connection_status: row.connectionStatus,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The project's columns, in the order a compiled SELECT of them returns them (`readProject`). */
export const projectColumns = getTableColumns(projects);
export const readProject = rowReader(projectColumns);
