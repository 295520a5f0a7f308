/**
 * Reading API keys (API_CONTRACT §21): the caller's account's keys in its organization, and every
 * key of the organization for an org owner or admin; a key restricted to projects sees only its
 * own family (§28). A key outside that is `404`, as if it did not exist. Revoked keys are listed
 * too, with their `revoked_at`.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { CallerContext, Identity } from "../../context";
import type { Db } from "../../db/client";
import { keyset, type Page, type PageRequest, toPage } from "../../db/pagination";
import { apiKeys } from "../../db/schema";
import { notFound } from "../../errors";
import type { ApiKeyInfo } from "../../schemas/organization";
import { actsAsOrgAdmin } from "../access";
import { keyTreeIds, toApiKeyInfo } from "./api-keys";

export type ApiKeyListFilter = { accountId?: string | undefined };

/** The canonical filter key a cursor is bound to. */
export function apiKeyFilterKey(filter: ApiKeyListFilter): string {
  return filter.accountId ? `account_id=${filter.accountId}` : "";
}

/**
 * The keys the caller may see: its organization's, and only its account's unless it acts as an
 * owner or admin org-wide; a key restricted to projects (never one, `actsAsOrgAdmin`) only itself
 * and the keys made from it, at any depth (API_CONTRACT §28). Those all act as its account too,
 * so the account's index still leads the walk.
 */
function visibleKeys(identity: Identity): SQL {
  if (actsAsOrgAdmin(identity)) return eq(apiKeys.orgId, identity.orgId);
  return and(
    eq(apiKeys.orgId, identity.orgId),
    eq(apiKeys.accountId, identity.accountId),
    identity.projectIds === null
      ? undefined
      : sql`${apiKeys.id} IN (${keyTreeIds(eq(apiKeys.id, identity.keyId))})`,
  ) as SQL;
}

/**
 * A page of the keys the caller may see: one query, walking the (org_id, created_at, id) index,
 * or (org_id, account_id, created_at, id) for one account's keys, in order.
 */
export function apiKeyPageQuery(db: Db, identity: Identity, filter: ApiKeyListFilter, page: PageRequest) {
  const { where, orderBy } = keyset({ createdAt: apiKeys.createdAt, id: apiKeys.id }, page);
  return db
    .select()
    .from(apiKeys)
    .where(
      and(
        visibleKeys(identity),
        filter.accountId ? eq(apiKeys.accountId, filter.accountId) : undefined,
        where,
      ),
    )
    .orderBy(...orderBy)
    .limit(page.limit + 1);
}

/** `listApiKeys`. */
export async function listApiKeys(
  ctx: CallerContext,
  filter: ApiKeyListFilter,
  page: PageRequest,
): Promise<Page<ApiKeyInfo>> {
  const rows = await apiKeyPageQuery(ctx.db, ctx.identity, filter, page);
  return toPage(rows, page, (r) => ({ createdAt: r.createdAt, id: r.id }), toApiKeyInfo);
}

/** `getApiKey`: one key's record, under the list's visibility. */
export async function getApiKey(ctx: CallerContext, keyId: string): Promise<ApiKeyInfo> {
  const row = await ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), visibleKeys(ctx.identity)))
    .get();
  if (!row) throw notFound("API key");
  return toApiKeyInfo(row);
}
