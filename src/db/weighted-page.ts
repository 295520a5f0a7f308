/**
 * Pages whose records can each be megabytes (an audit entry, a variable version: each lists every
 * name a §18 change touched): a page's query cut by the weight of its rows, so that what one page
 * reads stays a few megabytes in an isolate of 128 (API_CONTRACT §4: a cut page holds fewer than
 * `limit` records, with `has_more` and a cursor after its last).
 */
import type { Db } from "./client";

/**
 * A page's query (`page`: its SQL and values, in `order`) cut where its rows' running `weight`
 * passes `bytes`, never before its first row: for lists whose records can each be megabytes (an
 * audit entry, a variable version), so that a page's reads stay a few megabytes in an isolate of
 * 128. Each row is the page's columns, then its running weight, its place, and how many rows the
 * page held before the cut (`wasCut`).
 */
export function weightedPage(
  db: Db,
  page: { sql: string; params: unknown[] },
  order: string,
  weight: string,
  bytes: number,
): D1PreparedStatement {
  return db.$client
    .prepare(
      `SELECT * FROM (SELECT page.*, sum(${weight}) OVER (ORDER BY ${order}) AS running, row_number() OVER (ORDER BY ${order}) AS n, count(*) OVER () AS page_rows FROM (${page.sql}) AS page) WHERE n = 1 OR running <= ${bytes} ORDER BY ${order}`,
    )
    .bind(...page.params);
}

/** Whether `weightedPage` cut the page: it holds fewer rows than its query gave. */
export function wasCut(rows: unknown[][]): boolean {
  const first = rows[0];
  return first !== undefined && rows.length < Number(first[first.length - 1]);
}
