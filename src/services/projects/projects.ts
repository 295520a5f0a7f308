/** Projects (SPEC.md "Projects", API_CONTRACT §3 "Project", §5, §8 disconnect, §10). */

import { and, eq, exists, lte, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { bindCompiled, compiled } from "../../db/compiled";
import { compiledKeyset, type Page, type PageRequest, pageValues, toPage } from "../../db/pagination";
import { environments, projectMembers, projects } from "../../db/schema";
import {
  assertEchoMatches,
  badInput,
  conflict,
  isUniqueViolation,
  loggableError,
  notFound,
} from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import type { ProjectRecord } from "../../schemas/project";
import type { ProjectCreateInput, ProjectReplaceInput } from "../../schemas/project-writes";
import {
  authorizeProjectCreate,
  callerMembershipOf,
  callerValues,
  canSeeAll,
  loadProject,
  restrictionVariant,
  withinKeyProjectsOf,
} from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { followedDeployments, notifyDeleted } from "../deployments/timeline";
import { sendToQueue } from "../events/queue";
import {
  checkIfMatch,
  deleteLatest,
  explainMiss,
  ifMatchGuard,
  stillAsRead,
  unchangedSince,
  writeLatest,
} from "../preconditions";
import { type ProjectRow, projectColumns, projectNameKey, readProject, toProjectRecord } from "./record";

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
    nameKey: projectNameKey(input.name),
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
      db.insert(projects).values(project),
      db.insert(environments).values({
        id: project.defaultEnvironmentId,
        projectId: project.id,
        name: "production",
        nameKey: "production",
        createdAt: now,
        updatedAt: now,
      }),
      db.insert(projectMembers).values({
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
        nameKey: projectNameKey(input.name),
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

/** `connected → disconnecting`; the queue consumer finishes it (`→ disconnected`). */
export async function disconnectProject(ctx: CallerContext, projectId: string): Promise<void> {
  const { db, identity } = ctx;
  const { project } = await loadProject(db, identity, projectId, "manage");
  const guard = (await checkIfMatch(ctx, toProjectRecord(project)))
    ? unchangedSince(projects, project)
    : undefined;
  const [moved] = await db.batch([
    db
      .update(projects)
      .set({ connectionStatus: "disconnecting", updatedAt: nowIso() })
      .where(and(eq(projects.id, projectId), eq(projects.connectionStatus, "connected"), guard))
      .returning({ id: projects.id }),
    auditEntry(ctx, {
      target: { type: "project", id: projectId },
      projectId,
      changes: { connection_status: { from: project.connectionStatus, to: "disconnecting" } },
    }),
  ]);
  if (!moved[0]) {
    if (guard) await explainMiss(db, projects, project, "Project");
    throw conflict("Only a `connected` project can be disconnected.");
  }
  // The change has committed: the message that finishes it follows. One that never reaches the
  // queue (the queue failing, the isolate dying first) is sent again by the cron's sweep
  // (`resendStuckDisconnects`), never answered as a 5xx (API_CONTRACT §11: a 5xx changed nothing).
  try {
    await sendToQueue(ctx, [{ kind: "project.disconnect", project_id: projectId }]);
  } catch (err) {
    ctx.log.error("project.disconnect not queued; left to the sweep", {
      project_id: projectId,
      error: loggableError(err),
    });
  }
}

/** The projects `disconnecting` since before `cutoff` (ISO time), at most a sweep's worth. */
export function stuckDisconnectsQuery(db: Db, cutoff: string) {
  return (
    db
      .select({ id: projects.id })
      .from(projects)
      // The literal, not a parameter: what lets SQLite use the partial index.
      .where(and(sql`${projects.connectionStatus} = 'disconnecting'`, lte(projects.updatedAt, cutoff)))
      .limit(DISCONNECT_SWEEP_LIMIT)
  );
}

/** A project `disconnecting` this long has lost its message: the sweep sends it again. */
export const STUCK_DISCONNECT_MS = 60_000;
/** Projects a sweep takes per database and run (the next run takes the rest). */
export const DISCONNECT_SWEEP_LIMIT = 100;

/**
 * The cron's backstop for disconnects (API_CONTRACT §8: the work finishes through the queue): the
 * projects `disconnecting` for over STUCK_DISCONNECT_MS, whose message was lost, get it again
 * (`finishDisconnect` is idempotent, so one whose message was only slow is finished once). One
 * read of a partial index that holds only `disconnecting` projects. Returns how many were sent; a
 * failure is logged, never thrown.
 */
export async function resendStuckDisconnects(ctx: ServiceContext, nowMs = Date.now()): Promise<number> {
  try {
    const stuck = await stuckDisconnectsQuery(ctx.db, toIso(nowMs - STUCK_DISCONNECT_MS)).all();
    if (stuck.length > 0) {
      await sendToQueue(
        ctx,
        stuck.map(({ id }) => ({ kind: "project.disconnect" as const, project_id: id })),
      );
    }
    return stuck.length;
  } catch (err) {
    // The queue down (the very cause of lost messages) holds up none of the cron's other sweeps;
    // the next run tries again.
    ctx.log.error("disconnect sweep failed; the next run tries again", {
      database: ctx.database,
      error: loggableError(err),
    });
    return 0;
  }
}

/** The consumer's half: `disconnecting → disconnected`. Idempotent. */
export async function finishDisconnect(ctx: ServiceContext, projectId: string): Promise<void> {
  const { db } = ctx;
  await db
    .update(projects)
    .set({ connectionStatus: "disconnected", updatedAt: nowIso() })
    .where(and(eq(projects.id, projectId), eq(projects.connectionStatus, "disconnecting")))
    .run();
}
