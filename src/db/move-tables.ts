/**
 * Moving an organization between databases (API_CONTRACT §32, src/services/moves/): the
 * directory's record of each move, and the two tables an organization database keeps while one of
 * its organizations moves out. Part of the one schema: src/db/schema.ts re-exports them.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "./columns";
import { MOVE_STATES } from "./values";

/**
 * A move, in the directory. At most one unfinished (`copying` or `switching`) per organization:
 * the partial unique index decides it in the INSERT itself, so two racing requests cannot both
 * start one. `phase` is the move object's own step (src/org-move/object.ts), finer than `state`.
 */
export const orgMoves = sqliteTable(
  "org_moves",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    fromDatabase: text("from_database").notNull(),
    toDatabase: text("to_database").notNull(),
    state: text("state", { enum: MOVE_STATES }).notNull(),
    rowsCopied: integer("rows_copied").notNull().default(0),
    error: text("error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finishedAt: text("finished_at"),
  },
  (t) => [
    uniqueIndex("org_moves_unfinished_idx").on(t.orgId).where(sql`state IN ('copying', 'switching')`),
    index("org_moves_org_created_idx").on(t.orgId, t.createdAt),
    index("org_moves_unfinished_updated_idx").on(t.updatedAt).where(sql`state IN ('copying', 'switching')`),
  ],
);

/**
 * An organization moving out of this database, or into it (`incoming`). While an outgoing one's
 * row is here, the capture triggers of every table of the organization (migration 0017) record
 * each changed row's key in `move_changes`; once `fenced`, they refuse every write of the
 * organization (`RAISE(ABORT, 'organization moved')`, answered `408` with `Retry-After`), so the
 * last changes can be copied and the directory switched; `switched` says the directory now names
 * `to_database`. The cron's sweeps leave both kinds alone (`notMoving`,
 * src/db/moving.ts): an incoming organization's rows are a copy still being made, and
 * a fenced one's cannot be written.
 */
export const movingOrgs = sqliteTable("moving_orgs", {
  orgId: text("org_id").primaryKey(),
  moveId: text("move_id").notNull(),
  toDatabase: text("to_database").notNull(),
  incoming: integer("incoming", { mode: "boolean" }).notNull().default(false),
  fenced: integer("fenced", { mode: "boolean" }).notNull().default(false),
  switched: integer("switched", { mode: "boolean" }).notNull().default(false),
});

/** The keys of the rows of a moving organization changed since its copy began, in commit order. */
export const moveChanges = sqliteTable(
  "move_changes",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    orgId: text("org_id").notNull(),
    /** The table's name. */
    tbl: text("tbl").notNull(),
    /** The row's primary key, a JSON array of its columns' values in the key's order. */
    pk: text("pk").notNull(),
  },
  (t) => [index("move_changes_org_seq_idx").on(t.orgId, t.seq)],
);
