/**
 * API keys (API_CONTRACT §5): `dpk_` + 32 random bytes (base64url), shown once, stored only
 * as a SHA-256 hash.
 *
 * Authentication is on every request, so a verified key is cached in the isolate for
 * CACHE_TTL_MS. That bounds how long another isolate may still accept a revoked key
 * (the contract allows 60 s); the isolate that revokes a key forgets it at once.
 *
 * A key made by a key (API_CONTRACT §21) authenticates exactly like any other, with the same one
 * lookup and no walk up its ancestors: revoking a key marks the key and every key made from it,
 * at any depth, revoked in one statement (./revoke.ts), which returns their ids so that the
 * revoking isolate forgets them all at once; every other isolate holds a cached entry at most
 * CACHE_TTL_MS (30 s), after which its next lookup reads the descendant's own `revoked_at`. So a
 * revocation reaches every cached descendant within 30 s, inside §5's 60 s, at no cost per request.
 */

import { and, eq, isNull, sql } from "drizzle-orm";
import { encodeBase64Url } from "hono/utils/encode";
import type { Caller, Identity, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { bindCompiled, prebuilt, type RowOf, rowReader } from "../../db/compiled";
import { DIRECTORY } from "../../db/databases";
import { apiKeyIndex, apiKeys, organizations, orgMembers } from "../../db/schema";
import { PRIMARY } from "../../db/session";
import { ApiError } from "../../errors";
import { setBounded } from "../../lib/bounded-map";
import { sha256Hex } from "../../lib/hex";
import { once } from "../../lib/once";

export const KEY_PREFIX = "dpk_";
const KEY_PATTERN = /^dpk_[A-Za-z0-9_-]{43}$/;
export const CACHE_TTL_MS = 30_000;
export const KEY_CACHE_MAX_ENTRIES = 10_000;

type CachedKey = { identity: Identity; expiresAt: number | null; cachedUntil: number };
const cache = new Map<string, CachedKey>();
/**
 * How many times this isolate has forgotten keys (`forgetOrganization`, `forgetKeys`): a lookup
 * that a forget overtook (it read before a move's switch or a revocation committed) answers its
 * own request but is not cached, or the isolate would hold for CACHE_TTL_MS what it just forgot.
 */
let forgets = 0;

export function generateKey(): string {
  // base64url without padding: 43 characters.
  return KEY_PREFIX + encodeBase64Url(crypto.getRandomValues(new Uint8Array(32)).buffer).replace(/=+$/, "");
}

export function hashKey(key: string): Promise<string> {
  return sha256Hex(key);
}

const unauthenticated = (message: string) => new ApiError("unauthenticated", message);

/**
 * Resolves a presented key to the caller it acts as, or throws `unauthenticated`: its identity,
 * and the `recheckAccess` a long-lived request (a live stream) asks later instead of keeping the
 * key (src/context.ts). Its `last_used_at` is the limiter object's to keep, and
 * src/rate-limit/key-use.ts's alone to write.
 */
export async function authenticate(ctx: ServiceContext, presented: string | undefined): Promise<Caller> {
  if (!presented) throw unauthenticated("An API key is required in the x-api-key header.");
  if (!KEY_PATTERN.test(presented)) throw unauthenticated("The API key is malformed.");
  const hash = await hashKey(presented);
  const identity = await identify(ctx, hash);
  // Over the hash alone: the key itself goes no further than this function.
  return {
    identity,
    recheckAccess: (options) => recheck(ctx, hash, identity.keyId, options?.fresh === true),
  };
}

/**
 * The identity of the key with this hash: from the isolate's cache, else D1; `fresh`: from the
 * primaries, whatever the cache holds.
 */
async function identify(ctx: ServiceContext, hash: string, fresh = false): Promise<Identity> {
  const now = Date.now();
  let entry = fresh ? undefined : cache.get(hash);
  if (!entry || entry.cachedUntil <= now) {
    const start = fresh ? PRIMARY : ctx.session.start;
    const since = forgets;
    entry = await loadKey(
      (database) => (database === ctx.database ? ctx.db : ctx.openSession(start, database).db),
      hash,
      now,
      since,
    );
    // The lookup ran on a replica session: a key created a moment ago may not have reached
    // that replica yet, so a miss is asked of the primary before it becomes a 401.
    if (!entry && start.mode !== "first-primary") {
      entry = await loadKey((database) => ctx.openSession(PRIMARY, database).db, hash, now, since);
    }
    if (!entry) throw unauthenticated("The API key is not valid.");
  }
  // An expired key stays cached: refusing it again needs no D1 round trip.
  if (entry.expiresAt !== null && entry.expiresAt <= now) throw unauthenticated("The API key has expired.");

  return entry.identity;
}

/**
 * `recheckAccess`: the key authenticated again, exactly as a new request with it would be (the
 * same cache, so at most one lookup per key every CACHE_TTL_MS), on the context it first
 * authenticated in. A failure other than the key's refusal (D1 unreachable) is thrown: it says
 * nothing of the key.
 */
async function recheck(
  ctx: ServiceContext,
  hash: string,
  keyId: string,
  fresh: boolean,
): Promise<Identity | null> {
  try {
    const identity = await identify(ctx, hash, fresh);
    return identity.keyId === keyId ? identity : null;
  } catch (err) {
    if (err instanceof ApiError && err.code === "unauthenticated") return null;
    throw err;
  }
}

/**
 * The key by its hash: the directory's index names its organization and that organization's
 * database (src/db/databases.ts), which holds the key itself and the org role of the account it
 * acts as (the membership must still exist). One query when the organization lives in the
 * directory's own database (its key is joined in the same statement), else one in each. Cached
 * unless keys were forgotten since `since` (`forgets` when the lookup began).
 */
async function loadKey(
  dbOf: (database: string) => Db,
  hash: string,
  now: number,
  since: number,
): Promise<CachedKey | undefined> {
  const [homeValues] = await bindCompiled(dbOf(DIRECTORY), homeQuery(), { hash }).raw();
  if (!homeValues) return undefined;
  const home = readHome()(homeValues);
  let row: RowOf<typeof KEY_COLUMNS> | undefined = home;
  if (home.database !== DIRECTORY) {
    const [values] = await bindCompiled(dbOf(home.database), keyQuery(), { hash }).raw();
    row = values ? readKey()(values) : undefined;
  }
  if (!row?.keyId || !row.orgId || !row.accountId || !row.orgRole) return undefined;
  const entry: CachedKey = {
    identity: {
      orgId: row.orgId,
      accountId: row.accountId,
      orgRole: row.orgRole,
      keyId: row.keyId,
      scopes: row.scopes ?? ["*"],
      projectIds: row.projectIds ?? null,
      database: home.database,
      limiter: row.limiter ?? ownLimiter(row.keyId),
    },
    expiresAt: row.expiresAt ? Date.parse(row.expiresAt) : null,
    cachedUntil: now + CACHE_TTL_MS,
  };
  if (forgets === since) setBounded(cache, hash, entry, KEY_CACHE_MAX_ENTRIES);
  return entry;
}

const KEY_COLUMNS = {
  keyId: apiKeys.id,
  orgId: apiKeys.orgId,
  accountId: apiKeys.accountId,
  expiresAt: apiKeys.expiresAt,
  scopes: apiKeys.scopes,
  projectIds: apiKeys.projectIds,
  limiter: apiKeys.limiter,
  orgRole: orgMembers.role,
};

/** The limiter object of a key that heads its family (API_CONTRACT §28), or predates `limiter`. */
export const ownLimiter = (keyId: string) => `key:${keyId}`;

const membership = () =>
  and(eq(orgMembers.orgId, apiKeys.orgId), eq(orgMembers.accountId, apiKeys.accountId));
const HOME_COLUMNS = { database: organizations.database, ...KEY_COLUMNS };
/** Made on the first lookup, not when the Worker starts (this module is in the startup graph). */
const readHome = once(() => rowReader(HOME_COLUMNS));
const readKey = once(() => rowReader(KEY_COLUMNS));

/**
 * The lookups of `loadKey`, prebuilt (src/db/compiled.ts): a key-cache miss binds its hash to SQL
 * text generated from these declarations, never built by Drizzle's builder in a Worker, and reads
 * the row by the columns it selected.
 */
const homeQuery = prebuilt("key:home", (b) =>
  b
    .select(HOME_COLUMNS)
    .from(apiKeyIndex)
    .innerJoin(organizations, eq(organizations.id, apiKeyIndex.orgId))
    .leftJoin(apiKeys, and(eq(apiKeys.keyHash, apiKeyIndex.keyHash), isNull(apiKeys.revokedAt)))
    .leftJoin(orgMembers, membership())
    .where(eq(apiKeyIndex.keyHash, sql.placeholder("hash"))),
);
const keyQuery = prebuilt("key:own", (b) =>
  b
    .select(KEY_COLUMNS)
    .from(apiKeys)
    .innerJoin(orgMembers, membership())
    .where(and(eq(apiKeys.keyHash, sql.placeholder("hash")), isNull(apiKeys.revokedAt))),
);

/** How many keys the isolate holds (for tests and diagnostics). */
export function keyCacheSize(): { keys: number } {
  return { keys: cache.size };
}

/**
 * Forget every cached key of an organization: it has moved to another database (API_CONTRACT
 * §32), so the next request of each reads where it is now.
 */
export function forgetOrganization(orgId: string): void {
  forgets++;
  for (const [hash, entry] of cache) {
    if (entry.identity.orgId === orgId) cache.delete(hash);
  }
}

/** Forget every cached entry of these keys (called by the isolate that revokes them). */
export function forgetKeys(keyIds: Iterable<string>): void {
  const gone = new Set(keyIds);
  if (gone.size === 0) return;
  forgets++;
  for (const [hash, entry] of cache) {
    if (gone.has(entry.identity.keyId)) cache.delete(hash);
  }
}
