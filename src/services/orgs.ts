/** Organizations, accounts and org memberships (API_CONTRACT §3, §5, §9). */

import { eq } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../context";
import type { Page } from "../db/pagination";
import { type AccountProfile, accounts, organizations, orgMembers } from "../db/schema";
import { badInput, conflict, isUniqueViolation, notFound } from "../errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type {
  AccountCreateInput,
  AccountRecord,
  OrganizationCreateInput,
  OrganizationRecord,
  OrgMemberInput,
  OrgMemberRecord,
} from "../schemas/organization";
import { auditEntry, diffRecords } from "./audit/entry";

function toOrgRecord(row: typeof organizations.$inferSelect): OrganizationRecord {
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
 * A new organization. Created by a caller (`createOrg`), the caller's account becomes its
 * `owner` in the same transaction; created internally (`internalCreateOrg`), it starts with no
 * member.
 */
export async function createOrg(
  ctx: ServiceContext,
  input: OrganizationCreateInput,
): Promise<OrganizationRecord> {
  const { db } = ctx;
  const { name } = input;
  const ownerAccountId = ctx.identity?.accountId;
  const now = nowIso();
  const org = { id: newId(), name, createdAt: now };
  // The entry belongs to the new organization: its audit log starts with its own creation.
  const audit = auditEntry(ctx, {
    orgId: org.id,
    target: { type: "organization", id: org.id },
    changes: diffRecords(null, toOrgRecord(org)),
  });
  if (ownerAccountId) {
    await db.batch([
      db.insert(organizations).values(org),
      db
        .insert(orgMembers)
        .values({ orgId: org.id, accountId: ownerAccountId, role: "owner", createdAt: now }),
      audit,
    ]);
  } else {
    await db.batch([db.insert(organizations).values(org), audit]);
  }
  return toOrgRecord(org);
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
    db.insert(accounts).values(row),
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
  const account = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) {
    throw badInput("No such account.", [{ path: "account_id", message: "No account has this ID." }]);
  }
  const row = { orgId, accountId, role, createdAt: nowIso() };
  const record = toOrgMemberRecord(row);
  try {
    await db.batch([
      db.insert(orgMembers).values(row),
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
