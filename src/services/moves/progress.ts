/**
 * What a move's object keeps between the steps of a move (API_CONTRACT §32), and what the steps
 * share: its progress (`MoveProgress`), the databases a step works on, and the limits the target
 * holds while the rows arrive. The steps themselves: ./run.ts, the switch among them ./switch.ts.
 */
import { sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import type { MoveRecord } from "../../schemas/move";
import { auditEntry } from "../audit/entry";
import type { CopyCursor } from "./copy";
import type { RemoveCursor } from "./remove";

export type MovePhase = "copy" | "catchup" | "switched" | "cleanup" | "undo" | "done";

/** What a move's object keeps. */
export type MoveProgress = {
  move: MoveRecord;
  phase: MovePhase;
  cursor: CopyCursor;
  /** Where removing the organization from a database (the source's cleanup, an undo's target) stands. */
  removal: RemoveCursor;
  rowsCopied: number;
  /** Failed runs in a row (the retry's backoff; before the switch, MOVE_ATTEMPTS of them fail it). */
  failures: number;
  /** When the directory came to name the target (ms), once it has. */
  switchedAt: number | null;
  /** How a move that is undone ends; a cancel's with the request that cancelled it (its audit entry's). */
  outcome: { state: "cancelled" | "failed"; error: string | null; by?: CancelRequest } | null;
};

/** The cancel request's own facts, which its `internal.cancelMove` entry carries (API_CONTRACT §14). */
export type CancelRequest = { requestId: string; ip: string | null; userAgent: string | null };

/** Limits no copy can reach: the target's while the rows arrive (the real ones come at the switch). */
const UNREACHABLE = 1_000_000_000_000;

/** The databases a step of a move works on, and the context of the target's. */
export type Databases = { source: Db; target: Db; directory: Db; ctx: ServiceContext };

export function unreachableLimits() {
  return {
    projectsLimit: UNREACHABLE,
    environmentsLimit: UNREACHABLE,
    variablesLimit: UNREACHABLE,
    apiKeysLimit: UNREACHABLE,
    integrationsLimit: UNREACHABLE,
    auditStreamsLimit: UNREACHABLE,
    deploymentsPerDayLimit: UNREACHABLE,
  };
}

/**
 * A move's own entry in its organization's log, on `db` (where the organization then is): the
 * switch's `internal.completeMove` or an undone cancel's `internal.cancelMove`, with the cancel
 * request's facts when there was one. Written once, however often a run cut short writes it again:
 * its id is the move's, and a move either switches or is undone, never both.
 */
export function moveEntry(
  dbs: Databases,
  db: Db,
  move: MoveRecord,
  operationId: "internal.completeMove" | "internal.cancelMove",
  by?: CancelRequest,
) {
  const ctx: ServiceContext = {
    ...dbs.ctx,
    db,
    ...(by ? { requestId: by.requestId } : {}),
    request: { operationId, ip: by?.ip ?? null, userAgent: by?.userAgent ?? null },
  };
  const [from, to] = operationId === "internal.completeMove" ? [move.from, move.to] : [move.to, move.from];
  return auditEntry(ctx, {
    id: move.id,
    orgId: move.org_id,
    target: { type: "organization", id: move.org_id },
    changes: { database: { from, to } },
    when: sql`NOT EXISTS (SELECT 1 FROM audit_log WHERE id = ${move.id})`,
  });
}
