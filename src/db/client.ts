import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof createDb>;

/** A Drizzle handle over the request's D1 binding (cheap: no connection is opened). */
export function createDb(d1: D1Database) {
  return drizzle(d1, { schema });
}
