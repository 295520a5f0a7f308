/** Walking a paginated list to its end, for the list tests of every area. */

import { expect } from "vitest";
import { request } from "./api";

type Envelope = { data: Array<{ id: string }>; has_more: boolean; next_page?: string };

/**
 * Every id of a list, page by page: each response is checked against /openapi.json, no page
 * is longer than `limit`, the last page has no `next_page`, and no record comes twice.
 * `extra` is appended to the query (e.g. `&status=failed`).
 */
export async function walkPages(
  key: string,
  path: string,
  sortBy: string,
  limit: number,
  extra = "",
): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  let ended = false;
  for (let pages = 0; pages < 100 && !ended; pages++) {
    const cursor = after ? `&after=${encodeURIComponent(after)}` : "";
    const res = await request<Envelope>(
      "GET",
      `${path}?limit=${limit}&sort_by=${encodeURIComponent(sortBy)}${extra}${cursor}`,
      { key },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.data.map((r) => r.id));
    if (!res.body.has_more) {
      expect(res.body.next_page).toBeUndefined();
      ended = true;
      break;
    }
    after = res.body.next_page;
  }
  // A list that never ends (a cursor that does not move on) fails here rather than passing short.
  expect(ended, `${path}: more than 100 pages`).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  return ids;
}

/** Ascending (created_at, id): the order of `sort_by=created_at`. */
export const byCreated = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
  a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1;
