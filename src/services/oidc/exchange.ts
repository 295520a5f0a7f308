/**
 * `POST /v1/oidc/token` (API_CONTRACT §27): a CI run trades its ID token for a short-lived key.
 * The request carries no API key: the token authenticates, under the trust it names.
 *
 * 1. The token's form, before anything is read (./verify.ts `checkTokenForm`).
 * 2. The trust: the directory's index names its organization's database (one indexed read), which
 *    holds the trust and its parent key (one read). Unknown, deleted, or under a parent key that
 *    was revoked or expired: `401`, like every other failure.
 * 3. The token's signature and claims (./verify.ts), with the issuer's keys cached per isolate.
 * 4. Its `jti`, claimed until the token expires in an object of its own (named by the issuer and
 *    the `jti`): a second exchange of the token, under any trust, on any isolate, is refused. Claimed last, so a token refused for another reason
 *    can still be exchanged once mended (a clock that was ahead); a failure after the claim (D1
 *    unreachable) leaves the token spent, and CI asks its provider for another.
 * 5. The key: the trust's account, scopes and projects, `ttl` seconds of life (never past its
 *    parent's expiry: a key never outlives the key it is made under, §21), made under the trust's
 *    parent key and counted in the trust's own window (`limiter`, §28); its index row first, then
 *    the key with its audit entry in one batch, inserted only while the parent key is live and the
 *    trust still exists (so a concurrent revocation or delete either sees it and revokes it, or
 *    comes first and no key is made).
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import { inDatabase, type ServiceContext } from "../../context";
import { apiKeys, oidcTrustIndex, oidcTrusts, organizations } from "../../db/schema";
import { limitExceededOf } from "../../errors";
import { sha256Hex } from "../../lib/hex";
import { isId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import type { OidcTokenExchangeInput } from "../../schemas/oidc-writes";
import type { NewApiKeyRecord } from "../../schemas/organization";
import { apiKeyEtag, insertWhere, keyIsLive, newKey, toApiKeyInfo } from "../api-keys/api-keys";
import { auditEntry, diffRecords } from "../audit/entry";
import { directoryDb, writeKeyBothSides } from "../directory";
import { checkTokenForm, refused, verifyIdToken } from "./verify";

/** The claims an exchange's audit entry records where present (§27), never the token. */
const AUDITED_CLAIMS = ["sub", "repository", "ref", "run_id"] as const;

const noSuchTrust = () => refused("No such trust: `trust_id` names no OpenID Connect trust.");

/** The trust and its parent key's state, from its organization's database. */
async function loadTrust(ctx: ServiceContext, trustId: string) {
  const home = await directoryDb(ctx)
    .select({ database: organizations.database })
    .from(oidcTrustIndex)
    .innerJoin(organizations, eq(organizations.id, oidcTrustIndex.orgId))
    .where(eq(oidcTrustIndex.trustId, trustId))
    .get();
  if (!home) return undefined;
  const org = inDatabase(ctx, home.database);
  const found = await org.db
    .select({
      trust: oidcTrusts,
      parentRevokedAt: apiKeys.revokedAt,
      parentExpiresAt: apiKeys.expiresAt,
    })
    .from(oidcTrusts)
    .innerJoin(apiKeys, eq(apiKeys.id, oidcTrusts.parentId))
    .where(eq(oidcTrusts.id, trustId))
    .get();
  return found ? { ...found, ctx: org } : undefined;
}

export async function exchangeOidcToken(
  ctx: ServiceContext,
  input: OidcTokenExchangeInput,
): Promise<{ created: NewApiKeyRecord; etag: string }> {
  checkTokenForm(input.token);
  const found = isId(input.trust_id) ? await loadTrust(ctx, input.trust_id) : undefined;
  if (!found) throw noSuchTrust();
  const { trust, ctx: org } = found;
  const now = nowIso();
  if (found.parentRevokedAt !== null || (found.parentExpiresAt !== null && found.parentExpiresAt <= now)) {
    throw refused("The key that made the trust was revoked or has expired.");
  }
  const claims = await verifyIdToken(input.token, trust, {
    allowInsecure: ctx.config.allowInsecureOidcIssuers,
  });

  // A token's own object, named by its issuer and `jti` (a `jti` is unique per issuer): exchanged
  // once whichever trust it is sent under, and no issuer's exchanges meet in one object.
  const token = await sha256Hex(`${trust.issuer}\n${claims.jti}`);
  const claimer = ctx.limiters.get(ctx.limiters.idFromName(`oidc-jti:${token}`));
  const fresh = await claimer.claimJti({ jti: token, until: claims.exp * 1000 });
  if (!fresh) throw refused("The token was already exchanged (`jti`).");

  // One instant for the key's creation and its end: it lives exactly `ttl` seconds (§27).
  const issuedAt = Date.now();
  const lifetimeEnd = toIso(issuedAt + trust.ttl * 1000);
  const expiresAt =
    found.parentExpiresAt !== null && found.parentExpiresAt < lifetimeEnd
      ? found.parentExpiresAt
      : lifetimeEnd;
  const { key, row } = await newKey({
    orgId: trust.orgId,
    accountId: trust.accountId,
    createdBy: trust.accountId,
    name: trust.name,
    expiresAt,
    scopes: [...trust.scopes],
    projectIds: trust.projectIds ? [...trust.projectIds] : null,
    parentId: trust.parentId,
    limiter: trustLimiter(trust.id),
    oidcTrustId: trust.id,
    oidcSubject: claims.sub ?? null,
    createdAt: toIso(issuedAt),
  });
  const info = toApiKeyInfo(row);
  const stillTrusted = and(
    keyIsLive(trust.parentId, now),
    sql`EXISTS (SELECT 1 FROM ${oidcTrusts} WHERE ${oidcTrusts.id} = ${trust.id})`,
  ) as SQL;
  const written = writeKeyBothSides(org, row, [
    insertWhere(org.db, apiKeys, row, stillTrusted),
    auditEntry(org, {
      orgId: trust.orgId,
      target: { type: "api_key", id: row.id },
      actor: { accountId: trust.accountId, apiKeyId: row.id },
      changes: { ...diffRecords(null, info), ...auditedClaims(claims) },
    }),
  ]);
  let inserted: D1Result | undefined;
  try {
    [inserted] = await written;
  } catch (err) {
    // The organization has no room for another key (API_CONTRACT §29): nothing was made, so the
    // token was not exchanged and is given back (the 409 says why; a retry once there is room runs).
    if (limitExceededOf(err) !== undefined) await claimer.releaseJti({ jti: token });
    throw err;
  }
  // The trust was deleted, or its parent key revoked, since it was read: no key was made.
  if (!inserted?.meta.changes) throw refused("The trust was deleted, or the key that made it revoked.");
  return { created: { ...info, key }, etag: await apiKeyEtag(row) };
}

/** The limiter object of a trust: its keys' shared window (§28). */
export const trustLimiter = (trustId: string) => `trust:${trustId}`;

/** `{claim: {from: null, to: value}}` for each audited claim the token holds. */
function auditedClaims(claims: Record<string, unknown>) {
  const out: Record<string, { from: null; to: unknown }> = {};
  for (const name of AUDITED_CLAIMS) {
    if (Object.hasOwn(claims, name) && claims[name] !== undefined)
      out[name] = { from: null, to: claims[name] };
  }
  return out;
}
