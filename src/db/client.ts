import { drizzle } from "drizzle-orm/d1";

export type Db = ReturnType<typeof createDb>;

/**
 * A Drizzle handle over the request's D1 binding (cheap: no connection is opened). Without
 * `schema`: the relational query API is not used, and passing the schema would rebuild its
 * relational config on every call.
 */
export function createDb(d1: D1Database) {
  return drizzle(d1);
}
