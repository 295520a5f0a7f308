/**
 * Project writes (SPEC.md "Projects", API_CONTRACT §3 "Project", §5, §10); the reads are
 * ./reads.ts, the disconnect (§8) ./disconnect.ts.
 */

import { and, eq, exists } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { insertRow, prebuiltInsert } from "../../db/compiled-inserts";
import { environments, projectMembers, projects } from "../../db/schema";
import { assertEchoMatches, badInput, conflict, isUniqueViolation } from "../../errors";
import { newId } from "../../lib/ids";
import { nameKey } from "../../lib/name-key";
import { nowIso } from "../../lib/time";
import type { ProjectRecord } from "../../schemas/project";
import type { ProjectCreateInput, ProjectReplaceInput } from "../../schemas/project-writes";
import { authorizeProjectCreate, loadProject } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { followedDeployments, notifyDeleted } from "../deployments/timeline";
import { deleteLatest, ifMatchGuard, stillAsRead, unchangedSince, writeLatest } from "../preconditions";
import { type ProjectRow, toProjectRecord } from "./record";

// A project create's rows, written without Drizzle's builder from a new isolate's first create on.
for (const table of [projects, environments, projectMembers]) prebuiltInsert(table);

const nameTaken = (name: string) =>
  conflict(`A project named "${name}" already exists in this organization.`, [
    { path: "name", message: "Already taken (names are compared without regard to case)." },
  ]);

export async function createProject(ctx: CallerContext, input: ProjectCreateInput): Promise<ProjectRecord> {
  const { db, identity } = ctx;
  authorizeProjectCreate(identity);
  const now = nowIso();
  const project: ProjectRow = {
    id: newId(),
    orgId: identity.orgId,
    name: input.name,
    nameKey: nameKey(input.name),
    description: input.description ?? null,
    icon: input.icon ?? null,
    repoId: input.repo_id ?? null,
    defaultEnvironmentId: newId(),
    connectionStatus: "connected",
    createdAt: now,
    updatedAt: now,
  };
  try {
    // One round trip, one transaction: the project, its `production` environment, its owner.
    await db.batch([
      insertRow(db, projects, project),
      insertRow(db, environments, {
        id: project.defaultEnvironmentId,
        projectId: project.id,
        name: "production",
        nameKey: "production",
        createdAt: now,
        updatedAt: now,
      }),
      insertRow(db, projectMembers, {
        id: newId(),
        projectId: project.id,
        accountId: identity.accountId,
        role: "owner",
        createdAt: now,
      }),
      auditEntry(ctx, {
        target: { type: "project", id: project.id },
        projectId: project.id,
        changes: diffRecords(null, toProjectRecord(project)),
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
  return toProjectRecord(project);
}

/**
 * A full replace (SPEC: a PUT carries the whole record). Read-only fields the client echoed
 * from the record change nothing, and `id` and `org_id` must name this project.
 */
export async function replaceProject(
  ctx: CallerContext,
  projectId: string,
  input: ProjectReplaceInput,
): Promise<ProjectRecord> {
  const { db, identity } = ctx;
  assertEchoMatches(input, { id: projectId, org_id: identity.orgId });
  const { project: read } = await loadProject(db, identity, projectId, "manage");
  // If-Match (API_CONTRACT §12): the write applies to the version it names or not at all.
  const guard = await ifMatchGuard(ctx, read, toProjectRecord);
  // Applied to the project as it is when the write lands, so the entry's `from` is what it replaced.
  return writeLatest(
    db,
    projects,
    read,
    async (before) => {
      const set = {
        name: input.name,
        nameKey: nameKey(input.name),
        description: input.description ?? null,
        icon: input.icon ?? null,
        repoId: input.repo_id ?? null,
        defaultEnvironmentId: input.default_environment_id,
        updatedAt: nowIso(),
      };
      let rows: ProjectRow[];
      try {
        // The environment check and the write are one statement: no window in which the
        // environment could be deleted between them.
        const update = db
          .update(projects)
          .set(set)
          .where(
            and(
              eq(projects.id, projectId),
              exists(
                db
                  .select({ id: environments.id })
                  .from(environments)
                  .where(
                    and(
                      eq(environments.id, input.default_environment_id),
                      eq(environments.projectId, projectId),
                    ),
                  ),
              ),
              unchangedSince(projects, before),
            ),
          )
          .returning();
        [rows] = await db.batch([
          update,
          auditEntry(ctx, {
            target: { type: "project", id: projectId },
            projectId,
            changes: diffRecords(toProjectRecord(before), toProjectRecord({ ...before, ...set })),
          }),
        ]);
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(input.name);
        throw err;
      }
      const updated = rows[0];
      if (updated) return toProjectRecord(updated);
      // Nothing matched. The project as read is still there: the environment is not its own.
      // (Gone or changed since: `writeLatest` reads it again.) Only this path pays the check.
      if (await stillAsRead(db, projects, before)) {
        throw badInput("`default_environment_id` must name an environment of this project.", [
          { path: "default_environment_id", message: "Not an environment of this project." },
        ]);
      }
      return undefined;
    },
    { guard, what: "Project" },
  );
}

/**
 * Deletes the project and, by cascade, everything inside it; the name is free again at once. The
 * deployments that may still be followed are read in the same batch, and their feeds told after
 * the commit: a wait on one answers 404, a stream of one ends.
 */
export async function deleteProject(ctx: CallerContext, projectId: string): Promise<void> {
  const { db, identity } = ctx;
  const { project: read } = await loadProject(db, identity, projectId, "manage");
  const guard = await ifMatchGuard(ctx, read, toProjectRecord);
  const deleted = await deleteLatest(
    ctx,
    projects,
    read,
    (project) => ({
      target: { type: "project", id: projectId },
      projectId,
      changes: diffRecords(toProjectRecord(project), null),
    }),
    { guard, what: "Project", cascaded: () => followedDeployments(db, projectId) },
  );
  notifyDeleted(ctx, deleted);
}
