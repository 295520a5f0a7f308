/**
 * The authorization model (API_CONTRACT §5), in one place.
 *
 * - Org `owner`/`admin` act as project `owner` on every project of their organization.
 * - Anyone else acts with their project membership role, or cannot see the project.
 * - A project the caller cannot see, and anything inside it, is `404 not_found` exactly
 *   as if it did not exist; a visible one with too low a role is `403 forbidden`.
 *
 * - A key restricted to some projects (API_CONTRACT §15, `project_ids`) acts as if every other
 *   project did not exist: the restriction is part of the same query (`withinKeyProjects`), so
 *   every lookup 404s and every list leaves those projects out, and it cannot create projects.
 * - Such a key holds no organization-wide power (API_CONTRACT §28): outside its projects it acts
 *   as an org `member` whatever its account's role (`orgWideRole`, the one rule every org-wide
 *   action reads), while inside them it keeps its account's role.
 *
 * Every lookup of a project-scoped object is one query: object ⨝ project (same org as the
 * caller, within the key's projects) ⟕ the caller's membership. Absent and invisible objects
 * run the same query.
 */
import { and, eq, getTableColumns, getTableName, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Identity } from "../context";
import type { Db } from "../db/client";
import { bindCompiled, compiled, prebuilt, rowReader } from "../db/compiled";
import { type OrgRole, type ProjectRole, projectMembers, projects } from "../db/schema";
import { ApiError, forbidden, notFound } from "../errors";
import { type Lookup, runLookup } from "./lookup";

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

/**
 * Sees every project of the organization by its account's org role (a key's `project_ids` narrow
 * it further). The account's role, not `orgWideRole`: it decides what the key may do inside its
 * projects, and whether it may make keys narrower than itself (API_CONTRACT §21, §28).
 */
export function canSeeAll(identity: Identity): boolean {
  return identity.orgRole === "owner" || identity.orgRole === "admin";
}

/**
 * The org role the identity acts with for whatever is not inside one of its projects: the
 * organization's audit log, its keys, making organizations, and every later org-wide operation.
 * A key restricted to projects acts as a `member` there, whatever its account's role
 * (API_CONTRACT §28): a key handed out for one project must not read the organization's history
 * or revoke the keys of the rest of it.
 */
export function orgWideRole(identity: Identity): OrgRole {
  return identity.projectIds === null ? identity.orgRole : "member";
}

/** Acts org-wide as an owner or admin (`orgWideRole`). */
export function actsAsOrgAdmin(identity: Identity): boolean {
  const role = orgWideRole(identity);
  return role === "owner" || role === "admin";
}

const restrictedMessage = (what: string) =>
  `${what} is organization-wide, and this API key is restricted to some projects (\`project_ids\`): ` +
  "outside them it acts as an organization member.";

/** An org-wide action of owners and admins (`actsAsOrgAdmin`), else `403 unauthorized`. */
export function authorizeOrgAdmin(identity: Identity, what: string): void {
  if (actsAsOrgAdmin(identity)) return;
  throw new ApiError(
    "unauthorized",
    identity.projectIds === null || !canSeeAll(identity)
      ? `${what} needs the organization role \`owner\` or \`admin\`.`
      : restrictedMessage(what),
  );
}

/**
 * An org-wide action that any member's key may take but a key restricted to projects may not
 * (API_CONTRACT §28: making an organization), else `403 unauthorized`.
 */
export function authorizeOrgWide(identity: Identity, what: string): void {
  if (identity.projectIds !== null) throw new ApiError("unauthorized", restrictedMessage(what));
}

/**
 * The key's project restriction as a condition on a project-id column, or undefined when the
 * key has none. Every query that finds projects or what is inside them includes it.
 */
export function withinKeyProjects(identity: Identity, projectId: SQLiteColumn): SQL | undefined {
  // One JSON parameter, not one per project: a key may name 100 projects, and D1 binds at most
  // 100 parameters per statement.
  return identity.projectIds ? inProjectList(projectId, JSON.stringify(identity.projectIds)) : undefined;
}

/** `projectId` is one of a JSON array's ids (a value, or a compiled statement's placeholder). */
const inProjectList = (projectId: SQLiteColumn, list: unknown) =>
  sql`${projectId} IN (SELECT value FROM json_each(${list}))`;

/** Creating a project: org `owner`/`admin` (else `403 unauthorized`), with a key not restricted to projects. */
export function authorizeProjectCreate(identity: Identity): void {
  if (identity.projectIds) {
    throw forbidden(
      "This API key is restricted to some projects (`project_ids`), so it cannot create projects.",
    );
  }
  if (!canSeeAll(identity)) {
    throw new ApiError("unauthorized", "Creating a project needs the organization role `owner` or `admin`.");
  }
}

/** Throws `not_found` (cannot see) or `forbidden` (role too low); returns the effective role. */
export function authorize(
  identity: Identity,
  projectId: string,
  memberRole: ProjectRole | null | undefined,
  action: ProjectAction,
  what: string,
): ProjectRole {
  const role =
    identity.projectIds && !identity.projectIds.includes(projectId)
      ? null
      : effectiveRole(identity, memberRole);
  if (!role) throw notFound(what);
  const needed = REQUIRED_ROLE[action];
  if (RANK[role] < RANK[needed]) {
    throw forbidden(`This action needs the project role \`${needed}\` or above; you are \`${role}\`.`);
  }
  return role;
}

type ProjectRowTable = SQLiteTable & { id: SQLiteColumn; projectId: SQLiteColumn };

/** An equality that narrows a scoped lookup: `[column of the scoped table, value]`. */
export type LookupExtra = readonly [column: SQLiteColumn, value: string];

/** The values of the caller's placeholders in a compiled statement (`withinKeyProjectsOf`). */
export function callerValues(identity: Identity): Record<string, unknown> {
  return {
    orgId: identity.orgId,
    accountId: identity.accountId,
    keyProjects: identity.projectIds ? JSON.stringify(identity.projectIds) : null,
  };
}

/**
 * In a compiled statement (src/db/compiled.ts): the key's project restriction on `projectId`,
 * read from the `keyProjects` placeholder, when the variant is for a restricted key.
 */
export function withinKeyProjectsOf(restricted: boolean, projectId: SQLiteColumn): SQL | undefined {
  return restricted ? inProjectList(projectId, sql.placeholder("keyProjects")) : undefined;
}

/**
 * In a compiled statement: the caller's membership of the project `projectId` names (a join with
 * `project_members`), the caller read from the `accountId` placeholder (`callerValues`).
 */
export function callerMembershipOf(projectId: SQLiteColumn): SQL | undefined {
  return and(
    eq(projectMembers.projectId, projectId),
    eq(projectMembers.accountId, sql.placeholder("accountId")),
  );
}

/**
 * Whether the caller's variant of a compiled statement restricts projects: part of every cache
 * key, since the restriction adds a condition to the statement's text.
 */
export const restrictionVariant = (identity: Identity) =>
  identity.projectIds ? "restricted" : "unrestricted";

// Aliased so that no column of a scoped table shares its name (`columnValues`).
const callerRole = sql<ProjectRole | null>`${projectMembers.role}`.as("caller_role");

type ScopedRead = (values: readonly unknown[]) => { row: unknown; callerRole: ProjectRole | null };
/** Per table: reads the row and the caller's membership role off a row of values. */
const authorizedReaders = new Map<string, ScopedRead>();
const authorizedSelection = (table: ProjectRowTable) => ({ ...getTableColumns(table), callerRole });

/**
 * Looks up one project-scoped row by id and checks `action` on its project, in one query.
 * `extra` narrows the lookup (for example "this resource belongs to that stack"); a row
 * that does not match it is `not_found` too. The statement's text is built once per isolate
 * and variant (table, extra column, key restriction).
 */
export function authorizedLookup<T extends ProjectRowTable>(
  db: Db,
  identity: Identity,
  table: T,
  id: string,
  action: ProjectAction,
  what: string,
  extra?: LookupExtra,
): Lookup<{ row: T["$inferSelect"]; role: ProjectRole }> {
  const name = getTableName(table);
  const variant = `scoped:${name}:${extra?.[0].name ?? ""}:${restrictionVariant(identity)}`;
  const query = compiled(variant, (b) =>
    b
      .select(authorizedSelection(table))
      .from(table as SQLiteTable)
      .innerJoin(
        projects,
        and(
          eq(projects.id, table.projectId),
          eq(projects.orgId, sql.placeholder("orgId")),
          withinKeyProjectsOf(identity.projectIds !== null, projects.id),
        ),
      )
      .leftJoin(projectMembers, callerMembershipOf(projects.id))
      .where(
        and(eq(table.id, sql.placeholder("id")), extra ? eq(extra[0], sql.placeholder("extra")) : undefined),
      ),
  );
  let readRow = authorizedReaders.get(name);
  if (!readRow) {
    const readAll = rowReader(authorizedSelection(table));
    readRow = (values) => {
      const { callerRole: role, ...row } = readAll(values);
      return { row, callerRole: role };
    };
    authorizedReaders.set(name, readRow);
  }
  const read = readRow;
  return {
    statement: bindCompiled(db, query, { ...callerValues(identity), id, extra: extra?.[1] }),
    read: (values) => {
      if (!values) throw notFound(what);
      const found = read(values);
      const row = found.row as T["$inferSelect"];
      const role = authorize(identity, row.projectId as string, found.callerRole, action, what);
      return { row, role };
    },
  };
}

/** `authorizedLookup`, run. */
export function loadAuthorized<T extends ProjectRowTable>(
  db: Db,
  identity: Identity,
  table: T,
  id: string,
  action: ProjectAction,
  what: string,
  extra?: LookupExtra,
): Promise<{ row: T["$inferSelect"]; role: ProjectRole }> {
  return runLookup(authorizedLookup(db, identity, table, id, action, what, extra));
}

const projectSelection = { ...getTableColumns(projects), callerRole };
const readProject = rowReader(projectSelection);

/** A project by id in the caller's organization, with the caller's membership role: per restriction. */
const projectQuery = (restricted: boolean) => (b: Db) =>
  b
    .select(projectSelection)
    .from(projects)
    .leftJoin(projectMembers, callerMembershipOf(projects.id))
    .where(
      and(
        eq(projects.id, sql.placeholder("id")),
        eq(projects.orgId, sql.placeholder("orgId")),
        withinKeyProjectsOf(restricted, projects.id),
      ),
    );
const projectQueries = {
  restricted: prebuilt("project:restricted", projectQuery(true)),
  unrestricted: prebuilt("project:unrestricted", projectQuery(false)),
};

/** Looks up a project of the caller's organization and checks `action` on it, in one query. */
export function projectLookup(
  db: Db,
  identity: Identity,
  projectId: string,
  action: ProjectAction,
): Lookup<{ project: typeof projects.$inferSelect; role: ProjectRole }> {
  const query = projectQueries[restrictionVariant(identity)]();
  return {
    statement: bindCompiled(db, query, { ...callerValues(identity), id: projectId }),
    read: (values) => {
      if (!values) throw notFound("Project");
      const { callerRole: memberRole, ...project } = readProject(values);
      const role = authorize(identity, projectId, memberRole, action, "Project");
      return { project, role };
    },
  };
}

/** `projectLookup`, run. */
export function loadProject(
  db: Db,
  identity: Identity,
  projectId: string,
  action: ProjectAction,
): Promise<{ project: typeof projects.$inferSelect; role: ProjectRole }> {
  return runLookup(projectLookup(db, identity, projectId, action));
}
