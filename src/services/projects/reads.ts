/**
 * Reading projects (SPEC.md "Projects", API_CONTRACT §3 "Project", §5): apart from ./projects.ts's
 * writes, so that a new isolate's first read of a project evaluates none of what a write needs
 * (its audit entry, the deployments it stops following, the rows a create prebuilds).
 */
import { and, eq, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindCompiled, compiled } from "../../db/compiled";
import { compiledKeyset, type Page, type PageRequest, pageValues, toPage } from "../../db/pagination";
import { projectMembers, projects } from "../../db/schema";
import { notFound } from "../../errors";
import type { ProjectRecord } from "../../schemas/project";
import {
  callerMembershipOf,
  callerValues,
  canSeeAll,
  loadProject,
  restrictionVariant,
  withinKeyProjectsOf,
} from "../access";
import { projectColumns, readProject, toProjectRecord } from "./record";

/** Projects of the caller's organization that the caller may see (org owner/admin: all). */
export async function listProjects(ctx: CallerContext, page: PageRequest): Promise<Page<ProjectRecord>> {
  const { db, identity } = ctx;
  const all = canSeeAll(identity);
  const keys = compiledKeyset({ createdAt: projects.createdAt, id: projects.id }, page);
  const query = compiled(
    `projects:${all ? "all" : "member"}:${restrictionVariant(identity)}:${keys.variant}`,
    (b) => {
      const from = b.select(projectColumns).from(projects);
      const visible = all ? from : from.innerJoin(projectMembers, callerMembershipOf(projects.id));
      return visible
        .where(
          and(
            eq(projects.orgId, sql.placeholder("orgId")),
            withinKeyProjectsOf(identity.projectIds !== null, projects.id),
            keys.where,
          ),
        )
        .orderBy(...keys.orderBy)
        .limit(keys.limit);
    },
  );
  const values = await bindCompiled(db, query, { ...callerValues(identity), ...pageValues(page) }).raw();
  const rows = values.map((v) => readProject(v));
  return toPage(rows, page, (r) => ({ createdAt: r.createdAt, id: r.id }), toProjectRecord);
}

/** The projects of an organization: only the caller's own organization exists for it. */
export async function listOrgProjects(
  ctx: CallerContext,
  orgId: string,
  page: PageRequest,
): Promise<Page<ProjectRecord>> {
  if (orgId !== ctx.identity.orgId) throw notFound("Organization");
  return listProjects(ctx, page);
}

export async function getProject(ctx: CallerContext, projectId: string): Promise<ProjectRecord> {
  const { db, identity } = ctx;
  const { project } = await loadProject(db, identity, projectId, "read");
  return toProjectRecord(project);
}
