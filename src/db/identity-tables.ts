/**
 * Whose everything is: organizations, accounts, their memberships and API keys, and the directory
 * row that finds a key's organization (conventions: src/db/schema.ts). Imported through schema.ts,
 * like every table.
 */
import { sql } from "drizzle-orm";
import { index, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns";
import { type AccountProfile, ORG_ROLES } from "./values";

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: createdAt(),
  /**
   * The D1 binding of the organization database that holds everything inside the organization
   * (src/db/databases.ts). The directory's row is the one that decides; an organization
   * database's copy of the row says the same.
   */
  database: text("database").notNull().default("DB"),
});

/**
 * The directory's index of API keys (src/db/databases.ts): which organization a key belongs to,
 * by the key's hash, so that authentication finds the organization database that holds the key
 * itself (its record, scopes and revocation). Written before the key, never changed after.
 */
export const apiKeyIndex = sqliteTable("api_key_index", {
  keyHash: text("key_hash").primaryKey(),
  keyId: text("key_id").notNull(),
  orgId: text("org_id").notNull(),
  createdAt: createdAt(),
});

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  displayName: text("display_name").notNull(),
  avatar: text("avatar"),
  profile: text("profile", { mode: "json" }).$type<AccountProfile>().notNull(),
  createdAt: createdAt(),
});

/** A row's organization (or account), its rows deleted with it: as core-tables.ts's `projectRef`. */
export const orgRef = () =>
  text("org_id")
    .notNull()
    .references(() => organizations.id, { onDelete: "cascade" });
export const accountRef = (name = "account_id") =>
  text(name)
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" });

export const orgMembers = sqliteTable(
  "org_members",
  {
    orgId: orgRef(),
    accountId: accountRef(),
    role: text("role", { enum: ORG_ROLES }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.accountId] }), index("org_members_account_idx").on(t.accountId)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: orgRef(),
    accountId: accountRef(),
    createdBy: accountRef("created_by"),
    name: text("name"),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    keyHash: text("key_hash").notNull(),
    expiresAt: text("expires_at"),
    revokedAt: text("revoked_at"),
    lastUsedAt: text("last_used_at"),
    /** What the key may do (API_CONTRACT §15): `["*"]`, or a list of scopes. */
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull().default(["*"]),
    /** The only projects the key may see, or null: every project its account may see. */
    projectIds: text("project_ids", { mode: "json" }).$type<string[]>(),
    createdAt: createdAt(),
    /**
     * The key that made this one (API_CONTRACT §21), or null for a key of the internal API. No
     * foreign key: keys are never deleted but with their organization, which takes the whole tree.
     */
    parentId: text("parent_id"),
    /**
     * The limiter object that counts the key's requests (API_CONTRACT §28: a key family shares one
     * rate limit): `key:<id>` of the key at the top of its `parent_id` chain, or `trust:<id>` of
     * the OpenID Connect trust that issued it or a key it descends from (§27). Set when the key is
     * made (its parent's), so authentication reads it with the key and the request still makes one
     * Durable Object call. Null only for a key written by code older than the column: it counts in
     * its own object, `key:<its id>` (migration 0013 filled it for the keys that existed).
     */
    limiter: text("limiter"),
    /** The OpenID Connect trust that issued the key (§27), or null: deleting the trust revokes its keys. */
    oidcTrustId: text("oidc_trust_id"),
    /** The `sub` of the ID token it was exchanged for (§27), or null. */
    oidcSubject: text("oidc_subject"),
  },
  (t) => [
    uniqueIndex("api_keys_hash_idx").on(t.keyHash),
    // Deleting a trust revokes the keys it issued by this index.
    index("api_keys_oidc_trust_idx").on(t.oidcTrustId),
    // The key lists (every key of an organization, or one account's), in keyset order.
    index("api_keys_org_created_idx").on(t.orgId, t.createdAt, t.id),
    index("api_keys_org_account_created_idx").on(t.orgId, t.accountId, t.createdAt, t.id),
    // A revocation walks a key's descendants by this index.
    index("api_keys_parent_idx").on(t.parentId),
    // The organization's live keys, which its `api_keys` limit counts (API_CONTRACT §29): a count
    // over the keys not revoked, by expiry, never over the revoked ones a long life leaves behind.
    index("api_keys_org_live_idx").on(t.orgId, t.expiresAt).where(sql`revoked_at IS NULL`),
  ],
);
