/**
 * The authorization model (API_CONTRACT §5), in one place.
 *
 * - Org `owner`/`admin` act as project `owner` on every project of their organization.
 * - Anyone else acts with their project membership role, or cannot see the project.
 * - A project the caller cannot see, and anything inside it, is `404 not_found` exactly
 *   as if it did not exist; a visible one with too low a role is `403 forbidden`.
 *
 * Every lookup of a project-scoped object is one query: object ⨝ project (same org as the
 * caller) ⟕ the caller's membership. Absent and invisible objects run the same query.
 */
import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Identity } from "../context";
import type { Db } from "../db/client";
import { preparedOnce } from "../db/prepared";
import { type ProjectRole, projectMembers, projects } from "../db/schema";
import { forbidden, notFound } from "../http/errors";

/** What an operation needs, as a minimum project role. */
export type ProjectAction = "read" | "write" | "manage";

export const REQUIRED_ROLE: Record<ProjectAction, ProjectRole> = {
  read: "viewer",
  write: "contributor",
  manage: "owner",
};

const RANK: Record<ProjectRole, number> = { viewer: 1, contributor: 2, owner: 3 };

/** The role the identity acts with on a project of its organization, or null if it cannot see it. */
export function effectiveRole(
  identity: Identity,
  memberRole: ProjectRole | null | undefined,
): ProjectRole | null {
  if (identity.orgRole === "owner" || identity.orgRole === "admin") return "owner";
  return memberRole ?? null;
}

export function canSeeAll(identity: Identity): boolean {
  return identity.orgRole === "owner" || identity.orgRole === "admin";
}

/** Throws `not_found` (cannot see) or `forbidden` (role too low); returns the effective role. */
export function authorize(
  identity: Identity,
  memberRole: ProjectRole | null | undefined,
  action: ProjectAction,
  what: string,
): ProjectRole {
  const role = effectiveRole(identity, memberRole);
  if (!role) throw notFound(what);
  const needed = REQUIRED_ROLE[action];
  if (RANK[role] < RANK[needed]) {
    throw forbidden(`This action needs the project role \`${needed}\` or above; you are \`${role}\`.`);
  }
  return role;
}

type ScopedTable = SQLiteTable & { id: SQLiteColumn; projectId: SQLiteColumn };

/**
 * Loads one project-scoped row by id and checks `action` on its project, in one query.
 * `extra` narrows the lookup (for example "this resource belongs to that stack"); a row
 * that does not match it is `not_found` too.
 */
export async function loadScoped<T extends ScopedTable>(
  db: Db,
  identity: Identity,
  table: T,
  id: string,
  action: ProjectAction,
  what: string,
  extra?: SQL,
): Promise<{ row: T["$inferSelect"]; role: ProjectRole }> {
  const found = await db
    .select({ row: getTableColumns(table), memberRole: projectMembers.role })
    .from(table as SQLiteTable)
    .innerJoin(projects, and(eq(projects.id, table.projectId), eq(projects.orgId, identity.orgId)))
    .leftJoin(
      projectMembers,
      and(eq(projectMembers.projectId, projects.id), eq(projectMembers.accountId, identity.accountId)),
    )
    .where(extra ? and(eq(table.id, id), extra) : eq(table.id, id))
    .get();
  if (!found) throw notFound(what);
  const role = authorize(identity, found.memberRole, action, what);
  return { row: found.row as T["$inferSelect"], role };
}

const projectLookup = preparedOnce((db) =>
  db
    .select({ project: getTableColumns(projects), memberRole: projectMembers.role })
    .from(projects)
    .leftJoin(
      projectMembers,
      and(
        eq(projectMembers.projectId, projects.id),
        eq(projectMembers.accountId, sql.placeholder("accountId")),
      ),
    )
    .where(and(eq(projects.id, sql.placeholder("projectId")), eq(projects.orgId, sql.placeholder("orgId"))))
    .prepare(),
);

/** Loads a project of the caller's organization and checks `action` on it, in one query. */
export async function loadProject(
  db: Db,
  identity: Identity,
  projectId: string,
  action: ProjectAction,
): Promise<{ project: typeof projects.$inferSelect; role: ProjectRole }> {
  const found = await projectLookup(db).get({
    accountId: identity.accountId,
    projectId,
    orgId: identity.orgId,
  });
  if (!found) throw notFound("Project");
  const role = authorize(identity, found.memberRole, action, "Project");
  return { project: found.project, role };
}
