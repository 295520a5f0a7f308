import { DrizzleD1Database, SQLiteD1Session } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";

export type Db = ReturnType<typeof createDb>;

/**
 * The methods of Drizzle's database whose code the deployed build leaves out
 * (`DRIZZLE_UNUSED_METHODS` in scripts/lib/drizzle-stand-ins.mjs: there they throw): the relational
 * queries (no schema is given), `$count`, `with` and `transaction` (D1 refuses its `begin`). Not
 * part of `Db`, so a call is a type error here rather than a throw in production only.
 */
type LeftOut = "query" | "$count" | "with" | "transaction";

/**
 * A Drizzle handle over a D1 session (src/db/session.ts) or, in tests and scripts, the bare
 * binding (cheap: no connection is opened).
 *
 * Made as drizzle-orm/d1's `drizzle(client)` makes one without options: its dialect, a D1 session
 * with no schema, logger or cache, the database, and `$client`. Not through `drizzle()` itself,
 * whose relational set-up (`config.schema`: never passed here, as the relational query API is not
 * used) brings 1.1 KiB gzip of code into the deployed upload that no request runs (bench/README.md,
 * "Bundle").
 *
 * Drizzle's D1 session only ever calls `prepare` and `batch` on its client (drizzle-orm/d1/
 * session.js; `transaction` would issue `begin`, which D1 refuses and nothing here uses), and a
 * `D1DatabaseSession` has both with the binding's signatures, so a session stands in for the
 * binding; the cast only hides the methods (`exec`, `withSession`, `dump`) that the driver
 * never calls.
 */
export function createDb(d1: D1Database | Pick<D1DatabaseSession, "prepare" | "batch">) {
  const client = d1 as D1Database;
  const dialect = new SQLiteAsyncDialect();
  const db = new DrizzleD1Database(
    "async",
    dialect,
    new SQLiteD1Session(client, dialect, undefined),
    undefined,
  );
  // A bound statement's followers (./compiled-inserts.ts: a record's spilled parts) go at the end of
  // whatever batch holds it, in the same transaction; the batch answers its own statements' results.
  const batch = db.batch.bind(db);
  const withFollowers: typeof batch = (items) => {
    const followers = items.flatMap((item) => (item as { followers?: typeof items }).followers ?? []);
    if (followers.length === 0) return batch(items);
    return batch([...items, ...followers] as unknown as typeof items).then(
      (results) => results.slice(0, items.length) as unknown as Awaited<ReturnType<typeof batch>>,
    ) as ReturnType<typeof batch>;
  };
  const handle: Omit<typeof db, LeftOut> = db;
  return Object.assign(handle, { $client: client, batch: withFollowers });
}
