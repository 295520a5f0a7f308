/**
 * Row counts scoped to what a test created: the suite shares one D1 across files (vitest
 * `isolate: false`), so a test never counts a whole table.
 */
import { env } from "cloudflare:test";

/** The rows of `table` in one project (or, for `projects`, in one organization). */
export async function countRows(
  table: string,
  scope: { projectId: string } | { orgId: string },
): Promise<number> {
  const [column, value] = "projectId" in scope ? ["project_id", scope.projectId] : ["org_id", scope.orgId];
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`)
    .bind(value)
    .first<{ n: number }>();
  return row?.n ?? 0;
}
