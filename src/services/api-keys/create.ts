/**
 * A key made by a key (API_CONTRACT §21, `createApiKey`): an org owner's or admin's key makes a
 * key that acts as the same account and can do at most what the calling key can, for at most as
 * long. What "at most" means is one rule, `keyExcess` (src/http/scopes.ts, beside the per-request
 * scope check).
 */

import { eq } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { apiKeys } from "../../db/schema";
import { ApiError, badInput } from "../../errors";
import { type KeyPowers, keyExcess } from "../../http/scopes";
import { nowIso } from "../../lib/time";
import type { NewApiKeyRecord } from "../../schemas/organization";
import type { ApiKeyDeriveInput } from "../../schemas/organization-writes";
import { canSeeAll } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { writeKeyBothSides } from "../directory";
import {
  type ApiKeyRow,
  apiKeyEtag,
  canonicalScopes,
  insertWhere,
  keyIsLive,
  newKey,
  orgProjectsAmong,
  refuseUnknownProjects,
  toApiKeyInfo,
} from "./api-keys";
import { ownLimiter } from "./authenticate";

/** The calling key went away while it was making something (a key, a trust: ../oidc/trusts.ts). */
export const callerKeyGone = () =>
  new ApiError("unauthenticated", "The API key making this request was revoked or has expired.");

/**
 * The calling key as stored, still live at `now` (else `callerKeyGone`), and which of `named` are
 * projects of its organization: one round trip. What a key or a trust may give is measured
 * against this parent (a key: `createApiKey`; a trust: ../oidc/trusts.ts).
 */
export async function liveCallerAndProjects(
  { db, identity }: CallerContext,
  named: readonly string[] | null | undefined,
  now: string,
) {
  const [parents, found] = await db.batch([
    db.select().from(apiKeys).where(eq(apiKeys.id, identity.keyId)),
    orgProjectsAmong(db, identity.orgId, named ?? []),
  ]);
  const parent = parents[0];
  if (!parent || parent.revokedAt || (parent.expiresAt !== null && parent.expiresAt <= now)) {
    throw callerKeyGone();
  }
  return { parent, found };
}

/**
 * Org `owner`/`admin` only (`403 unauthorized`). Fields left out are the calling key's own; a key
 * that would exceed it is `403 forbidden` naming each field (`keyExcess`), before the named
 * projects are looked at, so a key restricted to some projects learns nothing of the others.
 * The calling key is read as stored (its expiry, and whether it is still live) in the same round
 * trip as the named projects.
 */
export async function createApiKey(
  ctx: CallerContext,
  body: ApiKeyDeriveInput,
): Promise<{ created: NewApiKeyRecord; etag: string }> {
  const { db, identity } = ctx;
  if (!canSeeAll(identity)) {
    throw new ApiError(
      "unauthorized",
      "Only a key of an organization owner or admin can make API keys (SPEC.md: keys are made by an admin).",
    );
  }
  const now = nowIso();
  if (body.expires_at && body.expires_at <= now) {
    throw badInput("`expires_at` must be in the future.", [
      { path: "expires_at", message: "Must be in the future." },
    ]);
  }
  const named = body.project_ids ? [...new Set(body.project_ids)] : body.project_ids;
  const { parent, found } = await liveCallerAndProjects(ctx, named, now);
  const powers = (row: Pick<ApiKeyRow, "scopes" | "projectIds" | "expiresAt">): KeyPowers => ({
    scopes: row.scopes,
    projectIds: row.projectIds,
    expiresAt: row.expiresAt,
  });
  const child = powers({
    scopes: body.scopes ? canonicalScopes(body.scopes) : parent.scopes,
    projectIds: named === undefined ? parent.projectIds : named,
    expiresAt: body.expires_at === undefined ? parent.expiresAt : body.expires_at,
  });
  const excess = keyExcess(powers(parent), child);
  if (excess.length) {
    throw new ApiError(
      "forbidden",
      "A key can make only a key that can do at most what it can, for at most as long.",
      excess,
    );
  }
  if (body.project_ids) refuseUnknownProjects(body.project_ids, found);

  const { key, row } = await newKey({
    orgId: identity.orgId,
    accountId: identity.accountId,
    createdBy: identity.accountId,
    name: body.name ?? null,
    expiresAt: child.expiresAt,
    scopes: [...child.scopes],
    projectIds: child.projectIds ? [...child.projectIds] : null,
    parentId: parent.id,
    // Counted in its family's window (API_CONTRACT §28): the root's, or the issuing trust's.
    limiter: parent.limiter ?? ownLimiter(parent.id),
  });
  const info = toApiKeyInfo(row);
  const [inserted] = await writeKeyBothSides(ctx, row, [
    // Only while its parent is neither revoked nor expired, in the same statement: a revocation of
    // the parent (./revoke.ts), which marks every descendant in one statement, lands either
    // before it (nothing is inserted) or after it (the new row is one of the descendants it
    // marks), so no live key is ever left under a revoked one.
    insertWhere(db, apiKeys, row, keyIsLive(parent.id, now)),
    auditEntry(ctx, {
      target: { type: "api_key", id: row.id },
      // The record as a GET shows it: never the key or its hash.
      changes: diffRecords(null, info),
    }),
  ]);
  // Revoked (or expired) since it was read: nothing was inserted, and the key is no longer valid.
  if (!inserted?.meta.changes) throw callerKeyGone();
  return { created: { ...info, key }, etag: await apiKeyEtag(row) };
}
