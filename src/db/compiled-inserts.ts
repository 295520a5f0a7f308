/**
 * Writes whose SQL text is built once per isolate, as the reads of ./compiled.ts are.
 *
 * Drizzle's builder turns an INSERT into SQL on every request: it walks the table's columns,
 * wraps each value, escapes each name and joins the chunks (building a project create's four
 * statements was 36 % of a warm create's instructions: bench/first-instructions.mjs). Here the text is Drizzle's, built once per
 * isolate (or taken from ./prebuilt-statements.ts when declared with `prebuiltInsert`) with a
 * placeholder for every column, and each request binds its values through each column's own
 * encoding, as Drizzle's `.values()` would: a JSON column's object as its JSON, a boolean as 0/1,
 * a column left out as its default (`.default()`, `$defaultFn`) or null.
 *
 * The bound statement is an item of Drizzle's own `db.batch`, so a service mixes it with the
 * builder's statements in one batch (one round trip, one transaction), and its result there is
 * the statement's D1 result, as an INSERT's is.
 */
import { type Column, getTableColumns, getTableName, is, SQL, sql } from "drizzle-orm";
import type { RunnableQuery } from "drizzle-orm/runnable-query";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";
import { boundParams, type Compiled, compiledFrom, prebuilt } from "./compiled";
import { inserted } from "./keyed-select";
import { PREBUILT } from "./prebuilt-statements";

/**
 * A statement and the values it binds, runnable alone (`run`) or as an item of `db.batch`: what
 * Drizzle's D1 batch asks of an item is its prepared form (`_prepare()`: the query, the statement
 * prepared on the batch's own session, and how its result reads), which this hands over ready.
 */
export class BoundStatement implements RunnableQuery<D1Result, "sqlite"> {
  declare readonly _: { readonly dialect: "sqlite"; readonly result: D1Result };

  constructor(
    private readonly db: Db,
    readonly sql: string,
    readonly params: readonly unknown[],
    /** Told the statement's result once it has run (in a batch: once the batch has committed). */
    private readonly onResult?: (result: D1Result) => void,
    /**
     * Statements that must commit with this one, in its batch, after every other statement of it
     * (a record's spilled parts: ./spill.ts). `db.batch` appends them (./client.ts), `run` too.
     */
    readonly followers: readonly BoundStatement[] = [],
  ) {}

  /** For drizzle-orm/d1's `batch`: it binds `params` to `stmt` and runs it with the others. */
  _prepare() {
    return {
      getQuery: () => this.toSQL(),
      stmt: this.db.$client.prepare(this.sql),
      mapResult: (result: unknown) => {
        this.onResult?.(result as D1Result);
        return result;
      },
    };
  }

  /** The statement's text and values, as a Drizzle query's `toSQL()` gives them. */
  toSQL(): { sql: string; params: unknown[] } {
    return { sql: this.sql, params: [...this.params] };
  }

  async run(): Promise<D1Result> {
    const bound = (statement: BoundStatement) =>
      this.db.$client.prepare(statement.sql).bind(...statement.params);
    const result =
      this.followers.length === 0
        ? await bound(this).run()
        : ((await this.db.$client.batch([bound(this), ...this.followers.map(bound)]))[0] as D1Result);
    this.onResult?.(result);
    return result;
  }
}

/** `query` with `values` bound (`boundParams`), as an item of `db.batch` or a statement run alone. */
export function bindStatement(
  db: Db,
  query: Compiled,
  values: Readonly<Record<string, unknown>>,
  onResult?: (result: D1Result) => void,
  followers: readonly BoundStatement[] = [],
) {
  return new BoundStatement(db, query.sql, boundParams(query, values), onResult, followers);
}

/** The value Drizzle's `.values()` would bind for `column`, given `value` (undefined: left out). */
export function driverValue(column: Column, value: unknown): unknown {
  let given = value;
  if (given === undefined) {
    if (column.default !== undefined && column.default !== null) given = column.default;
    else if (column.defaultFn !== undefined) given = column.defaultFn();
    else if (column.onUpdateFn !== undefined) given = column.onUpdateFn();
    else return null;
  }
  if (given === null) return null;
  const mapped = is(given, SQL) ? given : column.mapToDriverValue(given);
  // Bound values only: a service writing an expression builds that statement with Drizzle.
  if (is(mapped, SQL)) throw new Error(`compiled write: ${column.name} is an SQL expression, not a value`);
  return mapped;
}

type InsertPlan = {
  variant: string;
  /** Each insertable column's key and column, in the table's order (Drizzle's column list). */
  columns: [key: string, column: Column][];
  build: (b: Db) => { toSQL(): { sql: string; params: unknown[] } };
};

const plans = new WeakMap<SQLiteTable, InsertPlan>();

const variantOf = (table: SQLiteTable) => `insert:${getTableName(table)}`;

function insertPlan(table: SQLiteTable): InsertPlan {
  let plan = plans.get(table);
  if (!plan) {
    // Drizzle's own rule for an INSERT's columns (drizzle-orm/sqlite-core/dialect.js).
    const columns = Object.entries(getTableColumns(table)).filter(([, column]) => inserted(column));
    // Each placeholder inside `sql`: bound as it is, the encoding being `driverValue`'s.
    const row = Object.fromEntries(columns.map(([key]) => [key, sql`${sql.placeholder(key)}`]));
    plan = {
      variant: variantOf(table),
      columns,
      build: (b) => b.insert(table).values(row as never),
    };
    plans.set(table, plan);
  }
  return plan;
}

/**
 * Declares the compiled INSERT of `table` for ./prebuilt-statements.ts (`npm run
 * statements:generate`): for the tables a new isolate's first write of a kind inserts into, so
 * that it runs without Drizzle's builder. At module scope, once per table.
 */
export function prebuiltInsert(table: SQLiteTable): void {
  // Nothing of the plan is made until a statement is bound (or the text built).
  prebuilt(variantOf(table), (b) => insertPlan(table).build(b));
}

/**
 * `db.insert(table).values(row)` as a bound statement (see the file comment): an item of
 * `db.batch`, or run alone with `.run()`. Every value of `row` is a value: a service inserting an
 * expression (a subquery, `excluded.…`) or asking for `.returning()` builds it with Drizzle.
 */
export function insertRow<T extends SQLiteTable>(db: Db, table: T, row: T["$inferInsert"]): BoundStatement {
  const plan = insertPlan(table);
  const values: Record<string, unknown> = {};
  const given = row as Record<string, unknown>;
  for (const [key, column] of plan.columns) values[key] = driverValue(column, given[key]);
  return bindStatement(db, compiledFrom(PREBUILT, plan.variant, plan.build), values);
}
