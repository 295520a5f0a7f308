/** Organizations, accounts and org memberships (API_CONTRACT §3, §5, §9). */

import { eq } from "drizzle-orm";
import { type CallerContext, inDatabase, type ServiceContext } from "../../context";
import { insertRow } from "../../db/compiled-inserts";
import { placeOrganization } from "../../db/databases";
import type { Page } from "../../db/pagination";
import { type AccountProfile, accounts, organizations, orgMembers } from "../../db/schema";
import { badInput, conflict, isUniqueViolation, notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { AccountRecord, OrganizationRecord, OrgMemberRecord } from "../../schemas/organization";
import type {
  AccountCreateInput,
  OrganizationCreateInput,
  OrgMemberInput,
} from "../../schemas/organization-writes";
import { authorizeOrgWide } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { accountCopy, directoryAccount, organizationRow, writeBothSides } from "../directory";

function toOrgRecord(
  row: Pick<typeof organizations.$inferSelect, "id" | "name" | "createdAt">,
): OrganizationRecord {
  return { id: row.id, name: row.name, created_at: row.createdAt };
}

function toAccountRecord(row: typeof accounts.$inferSelect): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    display_name: row.displayName,
    avatar: row.avatar,
    profile: row.profile,
    created_at: row.createdAt,
  };
}

function toOrgMemberRecord(row: typeof orgMembers.$inferSelect): OrgMemberRecord {
  return { org_id: row.orgId, account_id: row.accountId, role: row.role, created_at: row.createdAt };
}

/**
 * A new organization. Created by a caller (`createOrg`; not by a key restricted to projects), it is placed in the caller's organization
 * database and the caller's account becomes its `owner` in the same transaction (the account's
 * copy is already there); created internally (`internalCreateOrg`), it starts with no member, in
 * the database `database` names or the one `placeOrganization` chooses. Its organization's side
 * is written first, then the directory's (./directory.ts).
 */
export async function createOrg(
  caller: ServiceContext,
  input: OrganizationCreateInput & { database?: string | undefined },
): Promise<OrganizationRecord> {
  const { name } = input;
  // A key restricted to projects cannot make an organization (API_CONTRACT §28).
  if (caller.identity) authorizeOrgWide(caller.identity, "Creating an organization");
  const ownerAccountId = caller.identity?.accountId;
  const id = newId();
  const ctx = inDatabase(
    caller,
    caller.identity ? caller.database : await placementOf(caller, id, input.database),
  );
  const { db } = ctx;
  const now = nowIso();
  const org = { id, name, createdAt: now, database: ctx.database };
  // The entry belongs to the new organization: its audit log starts with its own creation.
  const audit = auditEntry(ctx, {
    orgId: org.id,
    target: { type: "organization", id: org.id },
    changes: diffRecords(null, toOrgRecord(org)),
  });
  await writeBothSides(ctx, {
    first: "organization",
    org: ownerAccountId
      ? [
          organizationRow(db, org),
          insertRow(db, orgMembers, {
            orgId: org.id,
            accountId: ownerAccountId,
            role: "owner",
            createdAt: now,
          }),
          audit,
        ]
      : [organizationRow(db, org), audit],
    directory: (dir) => [organizationRow(dir, org)],
  });
  return toOrgRecord(org);
}

/** The database a new organization goes to: the one the operator named (checked), or the placement's. */
async function placementOf(ctx: ServiceContext, orgId: string, named: string | undefined): Promise<string> {
  if (named === undefined) return placeOrganization(orgId, ctx.config.newOrgDatabases);
  if (!ctx.config.orgDatabases.includes(named)) {
    throw badInput("No such organization database.", [
      { path: "database", message: `Expected one of: ${ctx.config.orgDatabases.join(", ")}.` },
    ]);
  }
  return named;
}

/** `GET /v1/orgs`: the caller's organization, as a one-item page. */
export async function listOrgs(ctx: CallerContext): Promise<Page<OrganizationRecord>> {
  const { db, identity } = ctx;
  const org = await db.select().from(organizations).where(eq(organizations.id, identity.orgId)).get();
  return { data: org ? [toOrgRecord(org)] : [], has_more: false };
}

export async function orgExists(ctx: ServiceContext, orgId: string): Promise<boolean> {
  const { db } = ctx;
  return (
    (await db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.id, orgId))
      .get()) !== undefined
  );
}

export function normalizeProfile(profile: Partial<AccountProfile> | null | undefined): AccountProfile {
  return {
    bio: profile?.bio ?? null,
    github: profile?.github ?? null,
    location: profile?.location ?? null,
    twitter: profile?.twitter ?? null,
    website: profile?.website ?? null,
  };
}

/** The internal API's `internalCreateAccount`. */
export async function createAccount(ctx: ServiceContext, input: AccountCreateInput): Promise<AccountRecord> {
  const { db } = ctx;
  const row = {
    id: newId(),
    name: input.name,
    displayName: input.display_name ?? input.name,
    avatar: input.avatar ?? null,
    profile: normalizeProfile(input.profile),
    createdAt: nowIso(),
  };
  const record = toAccountRecord(row);
  // An account belongs to no organization (it joins them later), so its entry has `org_id` null:
  // it appears in no organization's audit log and is kept for the platform's operators.
  await db.batch([
    insertRow(db, accounts, row),
    auditEntry(ctx, {
      orgId: null,
      target: { type: "account", id: row.id },
      changes: diffRecords(null, record),
    }),
  ]);
  return record;
}

/** The internal API's `internalAddOrgMember`. */
export async function addOrgMember(
  ctx: ServiceContext,
  orgId: string,
  input: OrgMemberInput,
): Promise<OrgMemberRecord> {
  const { db } = ctx;
  const { account_id: accountId, role } = input;
  if (!(await orgExists(ctx, orgId))) throw notFound("Organization");
  // Accounts are the directory's; the organization's database gets a copy with the membership.
  const account = await directoryAccount(ctx, accountId);
  if (!account) {
    throw badInput("No such account.", [{ path: "account_id", message: "No account has this ID." }]);
  }
  const row = { orgId, accountId, role, createdAt: nowIso() };
  const record = toOrgMemberRecord(row);
  try {
    await db.batch([
      accountCopy(db, account),
      insertRow(db, orgMembers, row),
      auditEntry(ctx, {
        orgId,
        target: { type: "org_member", id: accountId },
        changes: diffRecords(null, record),
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("The account is already a member of this organization.");
    throw err;
  }
  return record;
}
