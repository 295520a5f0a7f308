/**
 * Moving an organization to another database (API_CONTRACT §32), as the internal API asks for it:
 * the organization with its database, starting a move, reading one, cancelling one. The work of a
 * move is its object's (src/org-move/object.ts, steps in ./run.ts); the directory holds each move's
 * record (`org_moves`), which its object keeps up to date and every read answers from.
 *
 * How a move keeps the organization whole while it works, in order:
 * 1. The request records the move (the directory's unique index of unfinished moves refuses a
 *    second one in the same INSERT) and, in one batch of the organization's database, its audit
 *    entry and its `moving_orgs` row, from which on every change of the organization's rows there is
 *    recorded (`move_changes`, by the triggers of migration 0017).
 * 2. Its object copies the rows, a chunk at a time, then applies the recorded changes, round by
 *    round, until few are left (./copy.ts).
 * 3. The switch: the source is fenced (every write of the organization refused: `408`), the last
 *    changes applied, the limits copied, the target's copy and then the directory made to name the
 *    target, which from then on answers every request; at most SWITCH_BUDGET_MS of refusals, or
 *    the fence is lifted and the switch tried again later (./switch.ts).
 * 4. After MOVE_SETTLE_MS (no isolate still holds where the organization was), the source's rows
 *    are removed (./remove.ts), under its fence still, and the move reads `completed`.
 * A cancel (before the switch) or a failure removes what was copied and lifts the capture.
 */
import { and, desc, eq, lt, sql } from "drizzle-orm";
import { inDatabase, type ServiceContext } from "../../context";
import { DIRECTORY } from "../../db/databases";
import { movingOrgs, organizations, orgMoves } from "../../db/schema";
import { PRIMARY } from "../../db/session";
import { badInput, conflict, isUniqueViolation, loggableError, notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import type { InternalOrganizationRecord, MoveRecord } from "../../schemas/move";
import { auditEntry } from "../audit/entry";

type MoveRow = typeof orgMoves.$inferSelect;

export function toMoveRecord(row: MoveRow): MoveRecord {
  return {
    id: row.id,
    org_id: row.orgId,
    from: row.fromDatabase,
    to: row.toDatabase,
    state: row.state,
    rows_copied: row.rowsCopied,
    error: row.error,
    created_at: row.createdAt,
    finished_at: row.finishedAt,
  };
}

/** The directory on its primary: where organizations are, and their moves. */
const directory = (ctx: ServiceContext) =>
  ctx.database === DIRECTORY && ctx.session.start.mode === "first-primary"
    ? ctx.db
    : ctx.openSession(PRIMARY, DIRECTORY).db;

/** `GET /internal/v1/orgs/{org_id}`: the directory's row, which names the organization's database. */
export async function getInternalOrg(
  ctx: ServiceContext,
  orgId: string,
): Promise<InternalOrganizationRecord> {
  const row = await directory(ctx).select().from(organizations).where(eq(organizations.id, orgId)).get();
  if (!row) throw notFound("Organization");
  return { id: row.id, name: row.name, created_at: row.createdAt, database: row.database };
}

/** `GET /internal/v1/moves/{id}`. */
export async function getMove(ctx: ServiceContext, moveId: string): Promise<MoveRecord> {
  const row = await directory(ctx).select().from(orgMoves).where(eq(orgMoves.id, moveId)).get();
  if (!row) throw notFound("Move");
  return toMoveRecord(row);
}

/** The organization's latest move, if any. */
export async function latestMove(ctx: ServiceContext, orgId: string): Promise<MoveRecord | undefined> {
  const row = await directory(ctx)
    .select()
    .from(orgMoves)
    .where(eq(orgMoves.orgId, orgId))
    .orderBy(desc(orgMoves.createdAt))
    .limit(1)
    .get();
  return row ? toMoveRecord(row) : undefined;
}

/**
 * `POST /internal/v1/orgs/{org_id}/moves`: records the move and hands it to its object. `ctx` is
 * on the organization's database (src/middleware/internal-database.ts).
 */
export async function startMove(ctx: ServiceContext, orgId: string, to: string): Promise<MoveRecord> {
  const record = await recordMove(ctx, orgId, to);
  await moveObject(ctx, record.id).start(record);
  return record;
}

/**
 * A move's records, before anything runs it: the directory's (unique while unfinished: else `409`),
 * and the organization's database's capture of its changes, with the request's audit entry
 * (`internal.moveOrganization`) in the same batch.
 */
export async function recordMove(ctx: ServiceContext, orgId: string, to: string): Promise<MoveRecord> {
  const org = await getInternalOrg(ctx, orgId);
  const { orgDatabases } = ctx.config;
  if (!orgDatabases.includes(to) || to === org.database) {
    const others = orgDatabases.filter((name) => name !== org.database);
    throw badInput("No database to move the organization to.", [
      {
        path: "to",
        message:
          others.length > 0
            ? `Expected one of: ${others.join(", ")} (the organization is in ${org.database}).`
            : `The organization is in ${org.database}, the only organization database.`,
      },
    ]);
  }
  const now = nowIso();
  const row: MoveRow = {
    id: newId(),
    orgId,
    fromDatabase: org.database,
    toDatabase: to,
    state: "copying",
    rowsCopied: 0,
    error: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  try {
    await directory(ctx).insert(orgMoves).values(row).run();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict("Another move of this organization is not finished.", [
        { path: "org_id", message: "Wait until its move reads completed, cancelled or failed." },
      ]);
    }
    throw err;
  }
  const source = inDatabase(ctx, org.database);
  // Refused (D1 failed, say), the request's 5xx must leave no move behind: its capture, should the
  // batch have committed after all (its answer lost), then its directory record, are removed. If
  // they cannot be, or a crash cut the request short before this batch, the move is its run's to
  // finish or fail (./run.ts `copy` fails one without a capture, before it copies anything).
  await recordCapture(source, row, org.database).catch(async (err) => {
    try {
      await source.db
        .delete(movingOrgs)
        .where(and(eq(movingOrgs.orgId, orgId), eq(movingOrgs.moveId, row.id)))
        .run();
      await directory(ctx).delete(orgMoves).where(eq(orgMoves.id, row.id)).run();
    } catch (undoErr) {
      ctx.log.error("a refused move's records not removed; its run fails it", {
        move_id: row.id,
        error: loggableError(undoErr),
      });
    }
    throw err;
  });
  return toMoveRecord(row);
}

/** The source's capture of the organization's changes, with the request's audit entry, in one batch. */
function recordCapture(source: ServiceContext, row: MoveRow, from: string) {
  const { orgId, toDatabase: to } = row;
  return source.db.batch([
    source.db
      .insert(movingOrgs)
      .values({ orgId, moveId: row.id, toDatabase: to })
      .onConflictDoUpdate({
        target: movingOrgs.orgId,
        set: { moveId: row.id, toDatabase: to, incoming: false, fenced: false, switched: false },
      }),
    auditEntry(source, {
      orgId,
      target: { type: "organization", id: orgId },
      changes: { database: { from, to } },
      when: "always",
    }),
  ]);
}

/**
 * `POST /internal/v1/moves/{id}/cancel`: before the switch, its object stops it and removes what
 * it copied; once it is switching or finished, `409`.
 */
export async function cancelMove(ctx: ServiceContext, moveId: string): Promise<MoveRecord> {
  const current = await getMove(ctx, moveId);
  if (current.state !== "copying") throw cannotCancel(current);
  // Its `internal.cancelMove` entry is written by the undo's end, with this request's facts
  // (./run.ts `endUndo`); a retried cancel, or one that another cancel sent at once got ahead of,
  // is 409 here.
  const { move: outcome, cancelled } = await moveObject(ctx, moveId).cancel(current, {
    requestId: ctx.requestId,
    ip: ctx.request?.ip ?? null,
    userAgent: ctx.request?.userAgent ?? null,
  });
  if (!cancelled) throw cannotCancel(outcome);
  return outcome;
}

const cannotCancel = (move: MoveRecord) =>
  conflict(`The move is ${move.state}: only a move that is copying can be cancelled.`);

/** The object of a move. */
export function moveObject(ctx: ServiceContext, moveId: string) {
  return ctx.orgMoves.get(ctx.orgMoves.idFromName(moveId));
}

/** How long an unfinished move's record may stay unchanged before the cron wakes its object. */
export const STALLED_MOVE_MS = 5 * 60_000;

/**
 * The cron's backstop (on the directory): the object of every unfinished move whose record has not
 * changed for STALLED_MOVE_MS is woken (its alarm lost, or its start: a request that crashed after
 * recording the move). Returns how many.
 */
export async function resumeStalledMoves(ctx: ServiceContext, nowMs = Date.now()): Promise<number> {
  if (ctx.database !== DIRECTORY) return 0;
  const stalled = await stalledMoves(ctx, toIso(nowMs - STALLED_MOVE_MS));
  await Promise.all(stalled.map((move) => moveObject(ctx, move.id).start(move)));
  return stalled.length;
}

/** Unfinished moves whose record has not changed since `before`. */
export async function stalledMoves(ctx: ServiceContext, before: string): Promise<MoveRecord[]> {
  const rows = await directory(ctx)
    .select()
    .from(orgMoves)
    // The literal, not a parameter: what lets SQLite use the partial index.
    .where(and(sql`${orgMoves.state} IN ('copying', 'switching')`, lt(orgMoves.updatedAt, before)))
    .limit(100)
    .all();
  return rows.map(toMoveRecord);
}
