/**
 * The real D1 binding, with every session's start and every round trip recorded (a batch is one
 * round trip). The bare binding's own `prepare`, `batch` and `exec` throw, so any query that
 * bypasses a session fails the test.
 *
 * The local runtime has a single copy of the database, so where a round trip ran is read from
 * the Sessions API's rules (src/db/session.ts): a write always runs on the primary; a read runs
 * on a replica when its session started from a bookmark (or unconstrained), and may run on the
 * primary when its session started there (counted on the primary: an upper bound).
 */
import { env } from "cloudflare:test";

/** One round trip: where its session started (`withSession`'s argument) and its statements. */
export type D1Trip = { start: string; sql: string[] };

const WRITES = /^\s*(insert|update|delete|replace)\b/i;

/** Told of each session and round trip as it happens (for counts read while a stream is open). */
export type D1Listener = { session?(start: string): void; trip?(trip: D1Trip): void };

export function recordingD1(base: Env = env, listener: D1Listener = {}) {
  const starts: string[] = [];
  const trips: D1Trip[] = [];
  const record = (trip: D1Trip) => {
    trips.push(trip);
    listener.trip?.(trip);
  };
  const bypass = () => {
    throw new Error("D1 used without a session");
  };
  const DB = {
    prepare: bypass,
    batch: bypass,
    exec: bypass,
    withSession: (start: string) => {
      starts.push(start);
      listener.session?.(start);
      const session = base.DB.withSession(start);
      const inner = new WeakMap<object, D1PreparedStatement>();
      const wrap = (stmt: D1PreparedStatement, query: string): D1PreparedStatement => {
        const trip = <T>(run: () => Promise<T>) => {
          record({ start, sql: [query] });
          return run();
        };
        const wrapped = {
          bind: (...values: unknown[]) => wrap(stmt.bind(...values), query),
          all: () => trip(() => stmt.all()),
          raw: (options?: { columnNames?: boolean }) =>
            trip(() => (options?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw())),
          run: () => trip(() => stmt.run()),
          first: (column?: string) => trip(() => (column === undefined ? stmt.first() : stmt.first(column))),
        };
        inner.set(wrapped, stmt);
        queries.set(wrapped, query);
        return wrapped as unknown as D1PreparedStatement;
      };
      const queries = new WeakMap<object, string>();
      return {
        prepare: (query: string) => wrap(session.prepare(query), query),
        batch: (statements: D1PreparedStatement[]) => {
          record({ start, sql: statements.map((s) => queries.get(s) ?? "?") });
          return session.batch(statements.map((s) => inner.get(s) ?? s));
        },
        getBookmark: () => session.getBookmark(),
      };
    },
  } as unknown as D1Database;
  return { env: { ...base, DB }, starts, trips };
}

/** Whether a round trip writes (then it runs on the primary, whatever its session's start). */
export const writes = (trip: D1Trip) => trip.sql.some((query) => WRITES.test(query));

/** The round trips that reach the primary: every write, and every read of a session started there. */
export const onPrimary = (trips: readonly D1Trip[]) =>
  trips.filter((trip) => trip.start === "first-primary" || writes(trip));

/**
 * The bookmark an `X-D1-Bookmark` answer header carries, without the database it names and the
 * MAC that follows it (src/crypto/bookmarks.ts): what the service's sessions start from.
 */
export const bookmarkOfHeader = (header: string | null): string | null =>
  header === null ? null : header.replace(/^[A-Z][A-Z0-9_]*:/, "").replace(/\..*$/, "");

/**
 * The DB binding, adding up the bytes (as JSON) of everything its sessions' statements and batches
 * answer: what a request read from D1 into the isolate's memory.
 */
export function measuringD1(base: Env = env) {
  const read = { bytes: 0 };
  const count = <T>(result: T): T => {
    read.bytes += JSON.stringify(result, (_, v) => (v instanceof ArrayBuffer ? v.byteLength : v)).length;
    return result;
  };
  const inner = new WeakMap<object, D1PreparedStatement>();
  const statement = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = new Proxy(stmt, {
      get(target, name) {
        if (name === "bind") return (...values: unknown[]) => statement(target.bind(...values));
        const value = Reflect.get(target, name);
        if (typeof value !== "function") return value;
        if (name === "raw" || name === "all" || name === "first" || name === "run")
          return async (...args: unknown[]) => count(await value.apply(target, args));
        return value.bind(target);
      },
    });
    inner.set(wrapped, stmt);
    return wrapped;
  };
  const DB = new Proxy(base.DB, {
    get(db, prop) {
      if (prop !== "withSession") return Reflect.get(db, prop);
      return (start: string) => {
        const session = db.withSession(start);
        return new Proxy(session, {
          get(target, name) {
            if (name === "prepare") {
              return (query: string) => statement(target.prepare(query));
            }
            if (name === "batch") {
              return async (statements: D1PreparedStatement[]) =>
                count(await target.batch(statements.map((s) => inner.get(s) ?? s)));
            }
            const value = Reflect.get(target, name);
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
      };
    },
  });
  return { DB, read };
}
