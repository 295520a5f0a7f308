/**
 * The test runtime's databases (src/db/databases.ts): the directory `DB`, which is also the first
 * organization database, and `DB_ORG_2`. New organizations go to `DB` here (vitest.config.ts
 * `NEW_ORG_DATABASES`), so a test that reads rows through `env.DB` finds them; the tests of the
 * split place theirs in `DB_ORG_2` by name (`createOrgIn`).
 */
import { env } from "cloudflare:test";
import { internalOk } from "./api";
import { type Caller, createCaller, type Org, unique } from "./factories";

export const ORG_DATABASES = ["DB", "DB_ORG_2"] as const;
export type OrgDatabase = (typeof ORG_DATABASES)[number];

export function d1(name: OrgDatabase): D1Database {
  return env[name];
}

export function testDatabases(): D1Database[] {
  return ORG_DATABASES.map(d1);
}

/** A new organization placed in `database` by name (the internal create's `database`). */
export function createOrgIn(database: OrgDatabase): Promise<Org> {
  return internalOk<Org>("POST", "/orgs", { name: unique("org"), database });
}

/** A new organization in `database`, with its owner. */
export async function createOrgWithOwnerIn(database: OrgDatabase): Promise<{ org: Org; owner: Caller }> {
  const org = await createOrgIn(database);
  return { org, owner: await createCaller(org, "owner") };
}
