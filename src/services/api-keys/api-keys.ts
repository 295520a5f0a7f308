/**
 * API keys as records (API_CONTRACT §15): the calling key's record, and what a new key may be
 * narrowed to (scopes, projects). Authentication and issuing live in ./api-keys.ts.
 */
import { and, eq, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import type { Db } from "../../db/client";
import { apiKeys, projects } from "../../db/schema";
import { ApiError, badInput } from "../../errors";
import type { Scope } from "../../http/scopes";
import type { ApiKeyInfo } from "../../schemas/organization";

export function toApiKeyInfo(row: typeof apiKeys.$inferSelect): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    org_id: row.orgId,
    account_id: row.accountId,
    scopes: row.scopes as Scope[],
    project_ids: row.projectIds,
    expires_at: row.expiresAt,
    last_used_at: row.lastUsedAt,
    created_at: row.createdAt,
  };
}

/** The calling key's record (any valid key may read its own). */
export async function getCurrentApiKey(ctx: CallerContext): Promise<ApiKeyInfo> {
  const row = await ctx.db.select().from(apiKeys).where(eq(apiKeys.id, ctx.identity.keyId)).get();
  // Revoked between authentication and this read: the key is no longer valid.
  if (!row || row.revokedAt) throw new ApiError("unauthenticated", "The API key is not valid.");
  return toApiKeyInfo(row);
}

/** `["*"]` when absent; duplicates dropped, order kept. */
export function canonicalScopes(scopes: readonly Scope[] | undefined): string[] {
  return scopes ? [...new Set(scopes)] : ["*"];
}

/** Every restricted project must be a project of the key's organization (checked in one query). */
export async function checkProjectIds(
  db: Db,
  orgId: string,
  projectIds: readonly string[] | null | undefined,
): Promise<string[] | null> {
  if (!projectIds) return null;
  const wanted = [...new Set(projectIds)];
  const found = await db
    .select({ id: projects.id })
    .from(projects)
    // One JSON parameter: up to 100 IDs would pass D1's 100-parameter limit.
    .where(
      and(
        eq(projects.orgId, orgId),
        sql`${projects.id} IN (SELECT value FROM json_each(${JSON.stringify(wanted)}))`,
      ),
    )
    .all();
  const known = new Set(found.map((p) => p.id));
  const issues = projectIds.flatMap((id, i) =>
    known.has(id) ? [] : [{ path: `project_ids.${i}`, message: "Not a project of this organization." }],
  );
  if (issues.length)
    throw badInput("Every `project_ids` entry must be a project of the organization.", issues);
  return wanted;
}
