/**
 * A member record (API_CONTRACT §3 "Project member"): the membership, the account and the
 * account's org membership, read in one query (`memberQuery`) and shaped here.
 */
import { and, eq, getTableColumns, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { columnCount, rowReader } from "../../db/compiled";
import { accounts, type OrgRole, orgMembers, projectMembers } from "../../db/schema";
import type { MemberRecord } from "../../schemas/member";
import { normalizeProfile } from "../orgs/orgs";

const memberSelection = {
  membership: projectMembers,
  name: accounts.name,
  displayName: accounts.displayName,
  avatar: accounts.avatar,
  profile: accounts.profile,
  // Aliased: D1 batch results are objects keyed by column name, so two `role` columns would collide.
  orgRole: sql<OrgRole>`${orgMembers.role}`.as("org_role"),
};

export function memberQuery(db: Db, orgId: string | Placeholder, where: SQL | undefined) {
  return (
    db
      .select(memberSelection)
      .from(projectMembers)
      .innerJoin(accounts, eq(accounts.id, projectMembers.accountId))
      // Adding a member requires org membership, so the inner join hides no member.
      .innerJoin(
        orgMembers,
        and(eq(orgMembers.orgId, orgId), eq(orgMembers.accountId, projectMembers.accountId)),
      )
      .where(where)
  );
}

export type MemberRow = Awaited<ReturnType<ReturnType<typeof memberQuery>["all"]>>[number];

export function toMemberRecord(row: MemberRow): MemberRecord {
  return {
    account_id: row.membership.accountId,
    membership_id: row.membership.id,
    project_id: row.membership.projectId,
    name: row.name,
    display_name: row.displayName,
    avatar: row.avatar,
    org_role: row.orgRole,
    role: row.membership.role,
    profile: normalizeProfile(row.profile),
    created_at: row.membership.createdAt,
  };
}

const readMembership = rowReader(getTableColumns(projectMembers));
const membershipColumnCount = columnCount(getTableColumns(projectMembers));
const readAccount = rowReader({
  name: accounts.name,
  displayName: accounts.displayName,
  avatar: accounts.avatar,
  profile: accounts.profile,
  orgRole: orgMembers.role,
});

/** A `raw()` row of `memberSelection`, in its order: the membership's columns, then the account's. */
export function readMemberRow(values: readonly unknown[]): MemberRow {
  return { membership: readMembership(values), ...readAccount(values, membershipColumnCount) };
}
