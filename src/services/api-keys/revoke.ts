/**
 * Revoking API keys (API_CONTRACT §5, §21): a key and every key made from it, at any depth, in
 * one statement. Marking each descendant revoked (instead of checking ancestors when a key is
 * used) keeps authentication of a made key at the one lookup any key costs (./authenticate.ts
 * says how a revocation then reaches the keys cached elsewhere in time).
 */
import { and, eq, getTableColumns, isNull, type SQL, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { apiKeys } from "../../db/schema";
import { notFound } from "../../errors";
import { nowIso } from "../../lib/time";
import { actsAsOrgAdmin } from "../access";
import { auditEntry } from "../audit/entry";
import { ifMatchGuard, unchangedSince, writeLatest } from "../preconditions";
import { type ApiKeyRow, keyTreeIds, toApiKeyInfo } from "./api-keys";
import { forgetKeys } from "./authenticate";

/**
 * One statement: the key (while `root` holds for its row) and its descendants, those not yet
 * revoked, become revoked at `revokedAt`; answers their ids. A key made concurrently from any of
 * them is either already a row here (and revoked with them) or finds its parent revoked and is
 * never inserted (./create.ts): no live key is left under a revoked one.
 */
function revokeTree(db: Db, root: SQL, revokedAt: string) {
  return db
    .update(apiKeys)
    .set({ revokedAt })
    .where(and(sql`${apiKeys.id} IN (${keyTreeIds(root)})`, isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
}

/**
 * Revokes `row` and its descendants, honouring `If-Match` on the key's record, with one audit
 * entry when anything changed. A key already revoked changes nothing (no entry); so does one that
 * another request revokes first. The isolate that revokes forgets every revoked key at once.
 */
async function revokeWithDescendants(ctx: ServiceContext, row: ApiKeyRow): Promise<void> {
  const { db } = ctx;
  const guard = await ifMatchGuard(ctx, row, toApiKeyInfo);
  const revoked = await writeLatest(
    db,
    apiKeys,
    row,
    async (current) => {
      if (current.revokedAt) return [];
      const revokedAt = nowIso();
      const root = and(
        eq(apiKeys.id, current.id),
        isNull(apiKeys.revokedAt),
        // Under If-Match, only the version whose ETag was named.
        guard ? unchangedSince(apiKeys, current) : undefined,
      ) as SQL;
      const [ids] = await db.batch([
        revokeTree(db, root, revokedAt),
        auditEntry(ctx, {
          orgId: current.orgId,
          target: { type: "api_key", id: current.id },
          changes: { revoked_at: { from: null, to: revokedAt } },
        }),
      ]);
      return ids.length ? ids.map((r) => r.id) : undefined;
    },
    { guard, what: "API key" },
  );
  forgetKeys([row.id, ...revoked]);
}

/**
 * `revokeApiKey` (API_CONTRACT §21): the caller may revoke a key of its organization that acts
 * as its account or was made from a key of its account (at any depth), and an org owner or admin
 * any key of the organization; any other key is `404`, as if it did not exist. A key restricted
 * to projects reaches only itself and the keys made from it (API_CONTRACT §28), whatever its
 * account's role. The key's record, and whether the caller reaches it through the key or one of
 * its ancestors, are read in one query.
 */
export async function revokeApiKey(ctx: CallerContext, keyId: string): Promise<void> {
  const { db, identity } = ctx;
  const reaches =
    identity.projectIds === null
      ? sql`up.account_id = ${identity.accountId}`
      : sql`up.id = ${identity.keyId}`;
  const found = await db
    .select({
      ...getTableColumns(apiKeys),
      // How many of the key and its ancestors the caller reaches it through.
      lineage: sql<number>`(
        WITH RECURSIVE up(id, parent_id, account_id) AS (
          SELECT id, parent_id, account_id FROM ${apiKeys} AS k0 WHERE k0.id = ${keyId}
          UNION SELECT k.id, k.parent_id, k.account_id FROM ${apiKeys} AS k JOIN up ON k.id = up.parent_id
        )
        SELECT count(*) FROM up WHERE ${reaches})`.as("lineage"),
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, identity.orgId)))
    .get();
  if (!found || !(actsAsOrgAdmin(identity) || found.lineage > 0)) throw notFound("API key");
  const { lineage: _lineage, ...row } = found;
  await revokeWithDescendants(ctx, row);
}

/** The internal API's `internalRevokeApiKey`: any key, by id; an unknown key is `404`. */
export async function revokeApiKeyAsOperator(ctx: ServiceContext, keyId: string): Promise<void> {
  const row = await ctx.db.select().from(apiKeys).where(eq(apiKeys.id, keyId)).get();
  if (!row) throw notFound("API key");
  await revokeWithDescendants(ctx, row);
}
