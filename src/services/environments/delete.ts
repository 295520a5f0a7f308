/** `deleteEnvironment` (API_CONTRACT §23): its refusals, and the cascade in one statement. */
import { and, eq, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { environments } from "../../db/schema";
import { conflict } from "../../errors";
import { auditEntry, diffRecords } from "../audit/entry";
import { ifMatchGuard, unchangedSince, writeLatest } from "../preconditions";
import { readEnvironment } from "./environments";
import { type EnvironmentRow, toEnvironmentRecord } from "./record";

/** The statuses of a deployment that keep its environment from being deleted (§23). */
const ACTIVE_STATUSES = ["waiting", "queued", "in_progress"];

/**
 * `deleteEnvironment`: the environment and, by cascade, everything in it (components, stacks and
 * their resources, deployments and their timelines, variables and their versions) in one
 * statement. Refused (409) for the project's default environment and while a deployment of it
 * is `waiting`, `queued` or `in_progress`: both are conditions of the delete itself, so a
 * deployment created at the same moment either lands first (and the delete is refused) or finds
 * no environment (404): never a deployment without its environment.
 */
export async function deleteEnvironment(ctx: CallerContext, id: string): Promise<void> {
  const { db } = ctx;
  const { row: read, state } = await readEnvironment(ctx, id, "manage");
  const toRecord = (row: EnvironmentRow) => toEnvironmentRecord(row, state);
  const guard = await ifMatchGuard(ctx, read, toRecord);
  const active = JSON.stringify(ACTIVE_STATUSES);
  await writeLatest(
    db,
    environments,
    read,
    async (before) => {
      const [deleted, , refusal] = await db.batch([
        db
          .delete(environments)
          .where(
            and(
              eq(environments.id, id),
              unchangedSince(environments, before),
              sql`${environments.id} IS NOT (SELECT default_environment_id FROM projects WHERE id = ${before.projectId})`,
              sql`NOT EXISTS (SELECT 1 FROM deployments WHERE environment_id = ${id} AND status IN (SELECT value FROM json_each(${active})))`,
            ),
          )
          .returning({ id: environments.id }),
        auditEntry(ctx, {
          target: { type: "environment", id },
          projectId: before.projectId,
          changes: diffRecords(toRecord(before), null),
        }),
        db
          .select({
            isDefault: sql<number>`EXISTS (SELECT 1 FROM projects WHERE id = ${before.projectId} AND default_environment_id = ${id})`,
            busy: sql<number>`EXISTS (SELECT 1 FROM deployments WHERE environment_id = ${id} AND status IN (SELECT value FROM json_each(${active})))`,
          })
          .from(sql`(SELECT 1)`),
      ]);
      if (deleted[0]) return true;
      const why = refusal[0];
      if (why?.isDefault) {
        throw conflict(
          "The project's default environment cannot be deleted; make another the default first.",
        );
      }
      if (why?.busy) {
        throw conflict(
          "The environment has a deployment that is `waiting`, `queued` or `in_progress`; cancel it or let it finish first.",
        );
      }
      return undefined;
    },
    { guard, what: "Environment" },
  );
}
