/**
 * Recording attempts' outcomes on the primary (./attempts.ts): how an attempt hands over the
 * statements of its outcome, and who runs them. An attempt made outside a lane's run (tests,
 * operators) records its outcome alone; a lane group-commits the outcomes of the attempts that
 * end together (src/delivery-lane/group-commit.ts).
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";

export type OutcomeStatement = BatchItem<"sqlite">;

/** An outcome's statements, built on the database handle of whichever session runs them. */
export type OutcomeWrite = (db: Db) => [OutcomeStatement, ...OutcomeStatement[]];

/** The results of an outcome's own statements, and the bookmark of the session that wrote them. */
export type Recorded = { results: D1Result[]; bookmark: string | null };

export type Recorder = (ctx: ServiceContext, write: OutcomeWrite) => Promise<Recorded>;

/** Each outcome in a batch of its own (an attempt made outside a lane's run: tests, operators). */
export const recordAlone: Recorder = async (ctx, write) => ({
  results: (await ctx.db.batch(write(ctx.db))) as D1Result[],
  bookmark: ctx.session.bookmark(),
});
