/**
 * A project's disconnect from its cloud provider (API_CONTRACT §8): the request's half
 * (`connected → disconnecting`, then a queue message), the consumer's (`→ disconnected`), and the
 * cron's sweep that sends a lost message again.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { notMoving } from "../../db/moving";
import { projects } from "../../db/schema";
import { conflict } from "../../errors";
import { nowIso, toIso } from "../../lib/time";
import { loadProject } from "../access";
import { auditEntry } from "../audit/entry";
import { contained } from "../contained";
import { sendToQueue } from "../events/queue";
import { checkIfMatch, explainMiss, unchangedSince } from "../preconditions";
import { toProjectRecord } from "./record";

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
  await contained(ctx, "project.disconnect not queued; left to the sweep", { project_id: projectId }, () =>
    sendToQueue(ctx, [{ kind: "project.disconnect", project_id: projectId }]),
  );
}

/** The projects `disconnecting` since before `cutoff` (ISO time), at most a sweep's worth. */
export function stuckDisconnectsQuery(db: Db, cutoff: string) {
  return (
    db
      .select({ id: projects.id })
      .from(projects)
      // The literal, not a parameter: what lets SQLite use the partial index.
      .where(
        and(
          sql`${projects.connectionStatus} = 'disconnecting'`,
          lte(projects.updatedAt, cutoff),
          notMoving(sql.raw("projects.org_id")),
        ),
      )
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
  // The queue down (the very cause of lost messages) holds up none of the cron's other sweeps;
  // the next run tries again.
  const sent = await contained(
    ctx,
    "disconnect sweep failed; the next run tries again",
    { database: ctx.database },
    async () => {
      const stuck = await stuckDisconnectsQuery(ctx.db, toIso(nowMs - STUCK_DISCONNECT_MS)).all();
      if (stuck.length > 0) {
        await sendToQueue(
          ctx,
          stuck.map(({ id }) => ({ kind: "project.disconnect" as const, project_id: id })),
        );
      }
      return stuck.length;
    },
  );
  return sent ?? 0;
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
