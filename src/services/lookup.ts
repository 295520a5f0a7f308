/**
 * How a lookup that authorizes a request runs (the lookups themselves, and the rules they apply,
 * are ./access.ts's): alone, or in one D1 round trip with the reads it guards, whose rows are
 * returned only when it lets the caller through.
 */
import type { Db } from "../db/client";
import { columnValues } from "../db/compiled";
import { type Page, type PageQuery, type PageRequest, toPage } from "../db/pagination";

/**
 * A lookup that authorizes a request (`authorizedLookup`, `projectLookup`): its statement, and how
 * its one row (or none) becomes the result or the `404`/`403`. Run alone (`runLookup`) or in
 * one round trip with the statement it guards (`lookupThen`).
 */
export type Lookup<R> = {
  statement: D1PreparedStatement;
  read(values: readonly unknown[] | undefined): R;
};

/** The same lookup, its result reshaped by `f` (after the access check, which `read` makes). */
export function mapLookup<R, T>(lookup: Lookup<R>, f: (found: R) => T): Lookup<T> {
  return { statement: lookup.statement, read: (values) => f(lookup.read(values)) };
}

export async function runLookup<R>(lookup: Lookup<R>): Promise<R> {
  const [values] = await lookup.statement.raw();
  return lookup.read(values);
}

/**
 * The lookup and the reads it guards in one D1 batch (one round trip, one transaction): the
 * guarded statements' rows (as arrays of values, one list per statement) are returned only when
 * the lookup lets the caller through, else its `404`/`403` is thrown and they are dropped
 * unread. Each guarded statement's column names must be distinct (`columnValues`).
 */
export async function lookupThen<R, const S extends readonly D1PreparedStatement[]>(
  db: Db,
  lookup: Lookup<R>,
  ...guarded: S
): Promise<{ found: R; results: { [K in keyof S]: unknown[][] } }> {
  const [own, ...rest] = await db.$client.batch<Record<string, unknown>>([lookup.statement, ...guarded]);
  const first = own?.results[0];
  const found = lookup.read(first ? columnValues(first) : undefined);
  const results = guarded.map((_, i) => (rest[i]?.results ?? []).map(columnValues));
  return { found, results: results as { [K in keyof S]: unknown[][] } };
}

/**
 * A list behind a lookup (a project's, an environment's, a stack's…): the lookup and the page in
 * one round trip (`lookupThen`), the page shaped into the envelope only when the lookup passes.
 */
export async function guardedPage<Row extends { createdAt: string; id: string }, Item>(
  db: Db,
  lookup: Lookup<unknown>,
  page: PageRequest,
  query: PageQuery<Row>,
  shape: (row: Row) => Item,
): Promise<Page<Item>> {
  const {
    results: [values],
  } = await lookupThen(db, lookup, query.statement);
  return toPage(
    values.map((v) => query.read(v)),
    page,
    (r) => ({ createdAt: r.createdAt, id: r.id }),
    shape,
  );
}
