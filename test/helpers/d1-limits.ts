/**
 * The real D1 binding with the deployed D1's limits on what a statement carries: its SQL text at
 * most 100,000 bytes, at most 100 bound parameters, and each bound string at most 2,000,000 bytes
 * (what D1 refuses as "string or blob too big"). The local D1 takes both larger, so without this a test cannot see a write the
 * deployed database would refuse. Every statement of every session is checked, and the largest
 * bound value seen is kept (`largest()`), so that a test can show it came near the limit.
 */
import { env } from "cloudflare:test";
import { utf8Bytes } from "../../src/lib/utf8-bytes";

export const D1_SQL_BYTES = 100_000;
export const D1_VALUE_BYTES = 2_000_000;
export const D1_PARAMETERS = 100;

export function d1WithLimits(base: D1Database = env.DB) {
  let largest = 0;
  const checked = (query: string, values: unknown[]) => {
    if (utf8Bytes(query) > D1_SQL_BYTES) throw new Error("D1_ERROR: statement too long: SQLITE_TOOBIG");
    if (values.length > D1_PARAMETERS) throw new Error("D1_ERROR: too many SQL variables: SQLITE_ERROR");
    for (const value of values) {
      const bytes = typeof value === "string" ? utf8Bytes(value) : 0;
      largest = Math.max(largest, bytes);
      if (bytes > D1_VALUE_BYTES) throw new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG");
    }
  };
  const wrap = (prepare: (query: string) => D1PreparedStatement) => (query: string) => {
    checked(query, []);
    const statement = prepare(query);
    return new Proxy(statement, {
      get(inner, prop) {
        if (prop === "bind") {
          return (...values: unknown[]) => {
            checked(query, values);
            return inner.bind(...values);
          };
        }
        const value = Reflect.get(inner, prop);
        return typeof value === "function" ? value.bind(inner) : value;
      },
    });
  };
  const DB = new Proxy(base, {
    get(inner, prop) {
      if (prop === "prepare") return wrap((query) => inner.prepare(query));
      if (prop === "withSession") {
        return (start: string) => {
          const session = inner.withSession(start);
          return new Proxy(session, {
            get(s, p) {
              if (p === "prepare") return wrap((query) => s.prepare(query));
              const value = Reflect.get(s, p);
              return typeof value === "function" ? value.bind(s) : value;
            },
          });
        };
      }
      const value = Reflect.get(inner, prop);
      return typeof value === "function" ? value.bind(inner) : value;
    },
  });
  return { DB, largest: () => largest };
}
