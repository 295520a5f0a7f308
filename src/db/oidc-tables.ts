/**
 * OpenID Connect trusts (API_CONTRACT §27): what a CI run's ID token is trusted for, in its
 * organization's database like its keys, and the directory's index of them, which the exchange
 * reads first (it knows only the trust's id). Part of the one schema: src/db/schema.ts re-exports it.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accountRef, orgRef } from "./identity-tables";

/** A trust: which issuer's tokens, with which claims, may be exchanged for which key. */
export const oidcTrusts = sqliteTable(
  "oidc_trusts",
  {
    id: text("id").primaryKey(),
    orgId: orgRef(),
    /** The account its keys act as: the creating key's. */
    accountId: accountRef(),
    /**
     * The key that made it: the keys it issues are made under this one (their `parent_id`), so
     * revoking it revokes them (§21). No foreign key, as for `api_keys.parent_id`.
     */
    parentId: text("parent_id").notNull(),
    name: text("name").notNull(),
    /** Exactly as the tokens' `iss` spells it. */
    issuer: text("issuer").notNull(),
    audience: text("audience").notNull(),
    /** Claim name → pattern (`*` matches any run of characters), every one of which must match. */
    conditions: text("conditions", { mode: "json" }).$type<Record<string, string>>().notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    projectIds: text("project_ids", { mode: "json" }).$type<string[]>(),
    /** The issued keys' lifetime, in seconds. */
    ttl: integer("ttl").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("oidc_trusts_org_created_idx").on(t.orgId, t.createdAt, t.id)],
);

/**
 * The directory's index of trusts (src/db/databases.ts): which organization a trust belongs to,
 * so that an exchange, which names only the trust, finds the database that holds it. Written
 * before the trust; deleted after it (a row left by a crash names no trust: the exchange answers
 * as for an unknown one).
 */
export const oidcTrustIndex = sqliteTable("oidc_trust_index", {
  trustId: text("trust_id").primaryKey(),
  orgId: text("org_id").notNull(),
  createdAt: text("created_at").notNull(),
});
