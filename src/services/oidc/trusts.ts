/**
 * OpenID Connect trusts (API_CONTRACT §27): an org owner's or admin's key trusts an issuer to
 * vouch for CI runs, which then exchange their ID tokens for short-lived keys (./exchange.ts).
 *
 * A trust is a key-maker like a key (§21): it acts as the creating key's account, its keys may do
 * at most what that key can (`keyExcess`, the one rule), and its `parent_id` is that key, under
 * which every key it issues is made: revoking the key revokes them all (§21's cascade), and the
 * exchange inserts a key only while the parent is live and the trust still exists, so no key
 * outlives either. Deleting the trust revokes the keys it issued (and those made from them) in
 * the delete's own batch. A key restricted to projects holds no organization-wide power (§28): it
 * makes no trust and sees none.
 *
 * Trusts live in their organization's database, like its keys; the directory indexes them by id
 * (the exchange knows nothing else), written before the trust and deleted after it
 * (src/services/directory.ts says why that order leaves nothing half-done that matters).
 */

import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import type { Db } from "../../db/client";
import { insertRow } from "../../db/compiled-inserts";
import { keyset, type Page, type PageRequest, toPage } from "../../db/pagination";
import { apiKeys, oidcTrustIndex, oidcTrusts } from "../../db/schema";
import { ApiError, loggableError, notFound } from "../../errors";
import { recordEtag } from "../../http/etag";
import { type KeyPowers, keyExcess, type Scope } from "../../http/scopes";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { type OidcTrustRecord, TTL_DEFAULT } from "../../schemas/oidc";
import type { OidcTrustCreateInput } from "../../schemas/oidc-writes";
import { actsAsOrgAdmin, authorizeOrgAdmin } from "../access";
import {
  canonicalScopes,
  insertWhere,
  keyIsLive,
  keyTreeIds,
  refuseUnknownProjects,
} from "../api-keys/api-keys";
import { forgetKeys } from "../api-keys/authenticate";
import { callerKeyGone, liveCallerAndProjects } from "../api-keys/create";
import { auditEntry, diffRecords } from "../audit/entry";
import { directoryDb, writeIndexedBothSides } from "../directory";
import { deleteLatest, ifMatchGuard } from "../preconditions";
import { storedUrl } from "../stored-url";
import { checkIssuerUrl } from "./issuer-url";

export type OidcTrustRow = typeof oidcTrusts.$inferSelect;

export function toOidcTrustRecord(row: OidcTrustRow): OidcTrustRecord {
  return {
    id: row.id,
    org_id: row.orgId,
    account_id: row.accountId,
    parent_id: row.parentId,
    name: row.name,
    issuer: row.issuer,
    audience: row.audience,
    // A copy with a prototype: a claim named `__proto__` is an own key of it, as of the stored JSON.
    conditions: Object.fromEntries(Object.entries(row.conditions)),
    scopes: row.scopes as Scope[],
    project_ids: row.projectIds,
    ttl: row.ttl,
    created_at: row.createdAt,
  };
}

const WHAT = "OpenID Connect trust";

/**
 * `createOidcTrust`: org `owner`/`admin` with a key not restricted to projects (`403
 * unauthorized`); an issuer the URL rule refuses is `400`; scopes or projects beyond the calling
 * key's are `403 forbidden`, one `cause` per field, before the named projects are looked at. The
 * calling key is read as stored in the same round trip as the named projects, and the trust is
 * inserted only while that key is still live.
 */
export async function createOidcTrust(
  ctx: CallerContext,
  body: OidcTrustCreateInput,
): Promise<{ created: OidcTrustRecord; etag: string }> {
  const { db, identity } = ctx;
  authorizeOrgAdmin(identity, "Trusting an OpenID Connect issuer");
  // Kept as written (./issuer-url.ts), once its rule and §33's (no credentials) take it.
  const policy = { allowInsecure: ctx.config.allowInsecureOidcIssuers };
  storedUrl(
    "issuer",
    body.issuer,
    (raw) => checkIssuerUrl(raw, policy),
    "`issuer` is not a URL an issuer may have.",
  );
  const now = nowIso();
  const named = body.project_ids ? [...new Set(body.project_ids)] : body.project_ids;
  const { parent, found } = await liveCallerAndProjects(ctx, named, now);
  // The issued keys' own expiry is the exchange's (`ttl`), never past the parent's: not compared here.
  const issued: KeyPowers = {
    scopes: body.scopes ? canonicalScopes(body.scopes) : parent.scopes,
    projectIds: named === undefined ? parent.projectIds : named,
    expiresAt: parent.expiresAt,
  };
  const excess = keyExcess(
    { scopes: parent.scopes, projectIds: parent.projectIds, expiresAt: parent.expiresAt },
    issued,
  );
  if (excess.length) {
    throw new ApiError(
      "forbidden",
      "A trust can issue only keys that can do at most what the key making it can.",
      excess,
    );
  }
  if (body.project_ids) refuseUnknownProjects(body.project_ids, found);

  const row: OidcTrustRow = {
    id: newId(),
    orgId: identity.orgId,
    accountId: identity.accountId,
    parentId: parent.id,
    name: body.name,
    issuer: body.issuer,
    audience: body.audience,
    conditions: body.conditions,
    scopes: [...issued.scopes],
    projectIds: issued.projectIds ? [...issued.projectIds] : null,
    ttl: body.ttl ?? TTL_DEFAULT,
    createdAt: now,
  };
  const record = toOidcTrustRecord(row);
  // Its index row is taken back if the trust is refused (a move's fence) or its key is gone.
  const [inserted] = await writeIndexedBothSides(
    ctx,
    {
      what: "trust",
      id: row.id,
      row: (dir) =>
        insertRow(dir, oidcTrustIndex, { trustId: row.id, orgId: row.orgId, createdAt: row.createdAt }),
      unindex: (dir) => dir.delete(oidcTrustIndex).where(eq(oidcTrustIndex.trustId, row.id)).run(),
    },
    [
      insertWhere(db, oidcTrusts, row, keyIsLive(parent.id, now)),
      auditEntry(ctx, { target: { type: "oidc_trust", id: row.id }, changes: diffRecords(null, record) }),
    ],
  );
  // Revoked (or expired) since it was read: nothing was inserted, and the key is no longer valid.
  if (!inserted?.meta.changes) throw callerKeyGone();
  return { created: record, etag: await recordEtag(record) };
}

/** The trusts the caller sees: its organization's when it acts org-wide as an owner or admin, else none. */
function visibleTrusts(ctx: CallerContext): SQL | undefined {
  return actsAsOrgAdmin(ctx.identity) ? eq(oidcTrusts.orgId, ctx.identity.orgId) : undefined;
}

export function oidcTrustFilterKey(): string {
  return "";
}

/** `listOidcTrusts`: one query on the (org_id, created_at, id) index; an empty page for anyone else. */
export async function listOidcTrusts(ctx: CallerContext, page: PageRequest): Promise<Page<OidcTrustRecord>> {
  const visible = visibleTrusts(ctx);
  const { where, orderBy } = keyset({ createdAt: oidcTrusts.createdAt, id: oidcTrusts.id }, page);
  const rows = visible
    ? await ctx.db
        .select()
        .from(oidcTrusts)
        .where(and(visible, where))
        .orderBy(...orderBy)
        .limit(page.limit + 1)
    : [];
  return toPage(rows, page, (r) => ({ createdAt: r.createdAt, id: r.id }), toOidcTrustRecord);
}

function loadTrust(ctx: CallerContext, id: string): Promise<OidcTrustRow | undefined> {
  const visible = visibleTrusts(ctx);
  if (!visible) return Promise.resolve(undefined);
  return ctx.db
    .select()
    .from(oidcTrusts)
    .where(and(eq(oidcTrusts.id, id), visible))
    .get();
}

/** `getOidcTrust`: under the list's visibility, else `404`. */
export async function getOidcTrust(ctx: CallerContext, id: string): Promise<OidcTrustRecord> {
  const row = await loadTrust(ctx, id);
  if (!row) throw notFound(WHAT);
  return toOidcTrustRecord(row);
}

/**
 * Revokes, in the delete's batch, every key the trust issued and every key made from them (a
 * statement that answers their ids), while the trust is still there: the exchange inserts a key
 * only while its trust exists, so a key issued concurrently is either revoked here or never made.
 */
function revokeIssued(db: Db, trustId: string, revokedAt: string) {
  return db
    .update(apiKeys)
    .set({ revokedAt })
    .where(
      and(
        sql`${apiKeys.id} IN (${keyTreeIds(eq(apiKeys.oidcTrustId, trustId))})`,
        isNull(apiKeys.revokedAt),
        sql`EXISTS (SELECT 1 FROM ${oidcTrusts} WHERE ${oidcTrusts.id} = ${trustId})`,
      ),
    )
    .returning({ id: apiKeys.id });
}

/**
 * `deleteOidcTrust`: org `owner`/`admin` (`403 unauthorized` before anything is read, so the
 * refusal says nothing of the trust), honouring `If-Match`; the trust, the revocation of its keys
 * and the audit entry in one batch. The isolate forgets the revoked keys at once; every other one
 * within 30 s (src/services/api-keys/authenticate.ts), inside §5's 60 s. The directory's index row
 * goes after: a failure there leaves a row that names no trust, which the exchange refuses as unknown.
 */
export async function deleteOidcTrust(ctx: CallerContext, id: string): Promise<void> {
  authorizeOrgAdmin(ctx.identity, "Deleting an OpenID Connect trust");
  const row = await loadTrust(ctx, id);
  if (!row) throw notFound(WHAT);
  const guard = await ifMatchGuard(ctx, row, toOidcTrustRecord);
  const revoked = await deleteLatest(
    ctx,
    oidcTrusts,
    row,
    (current) => ({
      target: { type: "oidc_trust", id: current.id },
      changes: diffRecords(toOidcTrustRecord(current), null),
    }),
    { guard, what: WHAT, cascaded: (current) => revokeIssued(ctx.db, current.id, nowIso()) },
  );
  forgetKeys(revoked);
  try {
    await directoryDb(ctx).delete(oidcTrustIndex).where(eq(oidcTrustIndex.trustId, id)).run();
  } catch (err) {
    ctx.log.error("trust's directory index row not deleted; it names no trust", {
      trust_id: id,
      error: loggableError(err),
    });
  }
}
