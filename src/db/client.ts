import { drizzle } from "drizzle-orm/d1";

export type Db = ReturnType<typeof createDb>;

/**
 * A Drizzle handle over a D1 session (src/db/session.ts) or, in tests and scripts, the bare
 * binding (cheap: no connection is opened). Without `schema`: the relational query API is not
 * used, and passing the schema would rebuild its relational config on every call.
 *
 * Drizzle's D1 driver only ever calls `prepare` and `batch` on its client (drizzle-orm/d1/
 * session.js; `transaction` would issue `begin`, which D1 refuses and nothing here uses), and a
 * `D1DatabaseSession` has both with the binding's signatures, so a session stands in for the
 * binding; the cast only hides the methods (`exec`, `withSession`, `dump`) that the driver
 * never calls.
 */
export function createDb(d1: D1Database | Pick<D1DatabaseSession, "prepare" | "batch">) {
  return drizzle(d1 as D1Database);
}
