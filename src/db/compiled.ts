/**
 * Statements whose SQL text is built once per isolate.
 *
 * Building a query with Drizzle's builder and turning it into SQL costs about 0.4 ms of CPU per
 * request, twenty times what preparing and binding a ready statement costs. A Drizzle prepared
 * query cannot be kept instead: it is bound to the D1 client it was prepared on, and every
 * request runs on a D1 session of its own (src/db/session.ts). So a hot query is written once
 * with Drizzle's builder and `sql.placeholder(name)` for every value a request supplies,
 * compiled to its SQL text and parameter list once (`compiled`), and each request prepares that
 * text on its own session and binds its values (`bindCompiled`). Its rows come back as arrays
 * (`raw()`) and are read by the same column list the SELECT was built from (`rowReader`), so
 * the column order cannot drift.
 *
 * Whatever changes the text (a key's project restriction, a page's direction or position) is
 * part of the cache key: a bounded set of variants, each compiled on its first use.
 *
 * A statement that a new isolate's first request runs whatever the operation (the key lookup, the
 * key's use, a project's lookup) is declared with `prebuilt` instead: its text is generated into
 * ./prebuilt-statements.ts by `npm run statements:generate` (scripts/statements.ts, which
 * `check:static` runs with `--check`, so the file cannot go stale), so that no isolate pays
 * Drizzle's first build (its builder's code compiled and run, ~1.5 ms) to start serving.
 */
import {
  Column,
  fillPlaceholders,
  getTableColumns,
  is,
  Placeholder,
  type Query,
  type SQL,
  sql,
} from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { once } from "../lib/once";
import { createDb, type Db } from "./client";
import { PREBUILT, type PrebuiltStatement } from "./prebuilt-statements";

/** A query's SQL text and parameters (values, or placeholders filled per request). */
export type Compiled = Readonly<Query>;

/** Builds only, never runs: no method of this client is ever called. */
const unused = () => {
  throw new Error("the compile-time Drizzle handle never runs a query");
};
// Made on the first build: the key lookup (src/services/api-keys/authenticate.ts) brings this
// module into the Worker's start, which then builds nothing (and that lookup is prebuilt).
const builder = once(() => createDb({ prepare: unused, batch: unused }));

const cache = new Map<string, Compiled>();

type Build = (db: Db) => { toSQL(): Query };

const NOTHING_PREBUILT: Readonly<Record<string, PrebuiltStatement>> = {};

/**
 * The SQL of `build`'s query, built once per isolate for `variant` (a key naming everything
 * that changes the text; the callers' variants are a fixed, small set).
 */
export function compiled(variant: string, build: Build): Compiled {
  return compiledFrom(NOTHING_PREBUILT, variant, build);
}

const declared = new Map<string, Build>();

/**
 * A statement whose text does not depend on the request: `compiled(variant, build)`, its text
 * taken from ./prebuilt-statements.ts when that holds `variant` (as `npm run statements:generate`
 * wrote it from this same `build`), else built on first use like any other. Every value it binds
 * is a `sql.placeholder`. Declared once, at module scope: one build per variant.
 */
export function prebuilt(variant: string, build: Build): () => Compiled {
  if (declared.has(variant)) throw new Error(`prebuilt statement "${variant}" is declared twice`);
  declared.set(variant, build);
  return () => compiledFrom(PREBUILT, variant, build);
}

/** `compiled`, its text taken from `table` when that holds `variant` (no build then). */
export function compiledFrom(
  table: Readonly<Record<string, PrebuiltStatement>>,
  variant: string,
  build: Build,
): Compiled {
  let query = cache.get(variant);
  if (!query) {
    const made = table[variant];
    query = made
      ? { sql: made.sql, params: made.params.map((name) => sql.placeholder(name)) }
      : build(builder()).toSQL();
    cache.set(variant, query);
  }
  return query;
}

/**
 * What ./prebuilt-statements.ts is to hold: each `prebuilt` statement of the modules loaded so
 * far (or those of `variants`), built by Drizzle now, by variant (sorted). For
 * scripts/statements.ts.
 */
export function declaredStatements(
  variants: Iterable<string> = declared.keys(),
): Record<string, PrebuiltStatement> {
  const out: Record<string, PrebuiltStatement> = {};
  for (const variant of [...variants].sort()) {
    const build = declared.get(variant);
    if (!build) throw new Error(`prebuilt statement "${variant}" is not declared by any module loaded`);
    const { sql: text, params } = build(builder()).toSQL();
    out[variant] = {
      sql: text,
      params: params.map((param, i) => {
        if (!is(param, Placeholder)) {
          throw new Error(
            `prebuilt statement "${variant}": parameter ${i + 1} is a value, not a sql.placeholder`,
          );
        }
        return param.name;
      }),
    };
  }
  return out;
}

/** The compiled statement's parameters, its placeholders filled from `values`, in its text's order. */
export function boundParams(query: Compiled, values: Readonly<Record<string, unknown>>): unknown[] {
  const params = fillPlaceholders(query.params, values);
  for (const [i, value] of params.entries()) {
    // A placeholder without its value: a programming error, never a request's fault.
    if (value === undefined) throw new Error(`compiled statement: parameter ${i + 1} has no value`);
  }
  return params;
}

/** The compiled statement on the request's own session, its placeholders filled from `values`. */
export function bindCompiled(db: Db, query: Compiled, values: Record<string, unknown>): D1PreparedStatement {
  return db.$client.prepare(query.sql).bind(...boundParams(query, values));
}

/**
 * A query built for this request (its values bound as it was built) as a statement of the
 * request's own session, so that it can share a D1 batch (one round trip) with a compiled
 * one, such as the lookup that authorizes it (src/services/lookup.ts `lookupThen`). Its rows
 * are read as a compiled statement's are (`rowReader`, `tableReader`).
 */
export function bindQuery(db: Db, query: { toSQL(): Query }): D1PreparedStatement {
  const { sql, params } = query.toSQL();
  return db.$client.prepare(sql).bind(...params);
}

/** What a compiled SELECT may select: columns, and aliased expressions (read as they come). */
export type Selection = Record<string, Column | SQL.Aliased>;

/** A row of what `selection` names, typed as Drizzle types a SELECT of it. */
export type RowOf<S extends Selection> = {
  [K in keyof S]: S[K] extends SQL.Aliased<infer T>
    ? T
    : S[K] extends Column
      ? S[K]["_"]["notNull"] extends true
        ? S[K]["_"]["data"]
        : S[K]["_"]["data"] | null
      : never;
};

/**
 * Reads a row of `raw()` values, starting at `offset`, as the columns of `selection` in their
 * order (the order Drizzle selected them in), through each column's own decoding (JSON
 * columns are parsed, as Drizzle does).
 */
export function rowReader<S extends Selection>(
  selection: S,
): (values: readonly unknown[], offset?: number) => RowOf<S> {
  const columns = Object.entries(selection).map(
    ([key, field]) => [key, is(field, Column) ? field : null] as const,
  );
  return (values, offset = 0) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const [key, column] = columns[i] as (typeof columns)[number];
      const value = values[offset + i] ?? null;
      row[key] = value === null || !column ? value : column.mapFromDriverValue(value);
    }
    return row as RowOf<S>;
  };
}

const tableReaders = new WeakMap<SQLiteTable, (values: readonly unknown[], offset?: number) => unknown>();

/** `rowReader` of every column of `table` (a `select()` of it), made once per table. */
export function tableReader<T extends SQLiteTable>(
  table: T,
): (values: readonly unknown[], offset?: number) => T["$inferSelect"] {
  let read = tableReaders.get(table);
  if (!read) {
    read = rowReader(getTableColumns(table));
    tableReaders.set(table, read);
  }
  return read as (values: readonly unknown[], offset?: number) => T["$inferSelect"];
}

/** The number of values a `rowReader` of `selection` consumes. */
export const columnCount = (selection: Selection) => Object.keys(selection).length;

/**
 * A D1 batch answers each statement's rows as objects keyed by column name (no `raw()`), in
 * the statement's column order: as an array for `rowReader`. Only for statements whose column
 * names are all distinct (alias the others), or two would collapse into one key.
 */
export const columnValues = (row: Record<string, unknown>): unknown[] => Object.values(row);
