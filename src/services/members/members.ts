/**
 * Project members (SPEC.md "Project members", API_CONTRACT §3 "Project member", §5).
 *
 * A member record joins the membership, the account and the account's org membership in
 * one query. Lists of account IDs travel to D1 as one JSON parameter read with `json_each`,
 * because D1 binds at most 100 parameters per statement and an add may carry 100 IDs.
 */

import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindCompiled, compiled } from "../../db/compiled";
import { compiledKeyset, type Page, type PageRequest, pageValues, toPage } from "../../db/pagination";
import { type OrgRole, type ProjectRole, projectMembers } from "../../db/schema";
import { assertEchoMatches, badInput, conflict, isUniqueViolation, notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { MemberRecord } from "../../schemas/member";
import type { MemberAddInput, MemberReplaceInput } from "../../schemas/member-writes";
import { loadProject, projectLookup } from "../access";
import { auditEntry } from "../audit/entry";
import { lookupThen } from "../lookup";
import { checkIfMatch, explainMiss, hasIfMatch, unchangedSince } from "../preconditions";
import { type MemberRow, memberQuery, readMemberRow, toMemberRecord } from "./record";

/** The filter key a list cursor is bound to (API_CONTRACT §4). */
export function memberFilterKey(role: ProjectRole | undefined): string {
  return role ? `role=${role}` : "";
}

const memberNotFound = () => notFound("Member");

const lastOwner = () =>
  conflict("A project must keep at least one `owner`: promote another member to `owner` first.");

/**
 * SQL that is true unless the membership row being changed is the project's last owner.
 * It sits in the WHERE of the very UPDATE/DELETE that changes the row, so the check and
 * the write are one statement and two racing requests cannot both pass it.
 */
function keepsAnOwner(projectId: string): SQL {
  return sql`(${projectMembers.role} <> 'owner' OR (SELECT count(*) FROM project_members AS o WHERE o.project_id = ${projectId} AND o.role = 'owner') > 1)`;
}

export async function listProjectMembers(
  ctx: CallerContext,
  projectId: string,
  page: PageRequest,
  role: ProjectRole | undefined,
): Promise<Page<MemberRecord>> {
  const { db, identity } = ctx;
  const keys = compiledKeyset({ createdAt: projectMembers.createdAt, id: projectMembers.id }, page);
  const query = compiled(`members:${role ? "role" : ""}:${keys.variant}`, (b) =>
    memberQuery(
      b,
      sql.placeholder("orgId"),
      and(
        eq(projectMembers.projectId, sql.placeholder("projectId")),
        role ? eq(projectMembers.role, sql.placeholder("role")) : undefined,
        keys.where,
      ),
    )
      .orderBy(...keys.orderBy)
      .limit(keys.limit),
  );
  // The project's lookup and the page in one round trip; the page is only used if the lookup passes.
  const {
    results: [values],
  } = await lookupThen(
    db,
    projectLookup(db, identity, projectId, "read"),
    bindCompiled(db, query, { orgId: identity.orgId, projectId, role, ...pageValues(page) }),
  );
  const rows = values.map(readMemberRow);
  return toPage(
    rows,
    page,
    (r) => ({ createdAt: r.membership.createdAt, id: r.membership.id }),
    toMemberRecord,
  );
}

/**
 * With an `If-Match` naming ETags: reads the member, checks the ETag (409 if none is current)
 * and returns the condition that keeps the write to the membership row as read. The account's
 * own fields (name, profile) are part of the record and of its ETag, and are checked here;
 * they are not the membership's to change, so the write's condition covers the membership row.
 */
async function ifMatchGuard(ctx: CallerContext, orgId: string, target: SQL | undefined) {
  if (!hasIfMatch(ctx)) return undefined;
  const current = await memberQuery(ctx.db, orgId, target).get();
  if (!current) throw memberNotFound();
  await checkIfMatch(ctx, toMemberRecord(current));
  return { membership: current.membership, guard: unchangedSince(projectMembers, current.membership) };
}

export async function getProjectMember(
  ctx: CallerContext,
  projectId: string,
  accountId: string,
): Promise<MemberRecord> {
  const { db, identity } = ctx;
  const query = compiled("member", (b) =>
    memberQuery(
      b,
      sql.placeholder("orgId"),
      and(
        eq(projectMembers.projectId, sql.placeholder("projectId")),
        eq(projectMembers.accountId, sql.placeholder("accountId")),
      ),
    ),
  );
  // The project's lookup and the member in one round trip (the project is in the caller's org).
  const {
    results: [[values]],
  } = await lookupThen(
    db,
    projectLookup(db, identity, projectId, "read"),
    bindCompiled(db, query, { orgId: identity.orgId, projectId, accountId }),
  );
  if (!values) throw memberNotFound();
  return toMemberRecord(readMemberRow(values));
}

type Candidate = { account_id: string; org_role: OrgRole | null; membership_id: string | null };

/**
 * Adds every account or none. `accountIds` are distinct (the route checks); the answer
 * follows their order. Round trips: the project check, one query that classifies every
 * ID, and one batch (one transaction) that inserts and reads back.
 */
export async function addProjectMembers(
  ctx: CallerContext,
  projectId: string,
  input: MemberAddInput,
): Promise<MemberRecord[]> {
  const { db, identity } = ctx;
  const { account_ids: accountIds, role } = input;
  const { project } = await loadProject(db, identity, projectId, "manage");
  const idsJson = JSON.stringify(accountIds);
  const candidates = await db.all<Candidate>(sql`
    SELECT j.value AS account_id, om.role AS org_role, pm.id AS membership_id
    FROM json_each(${idsJson}) AS j
    LEFT JOIN org_members AS om ON om.org_id = ${project.orgId} AND om.account_id = j.value
    LEFT JOIN project_members AS pm ON pm.project_id = ${projectId} AND pm.account_id = j.value
    ORDER BY j.key`);

  const outsiders = candidates.filter((c) => c.org_role === null);
  if (outsiders.length > 0) {
    throw badInput(
      "Every account must be a member of the project's organization.",
      outsiders.map((c) => ({
        path: `account_ids.${accountIds.indexOf(c.account_id)}`,
        message: `Account ${c.account_id} does not exist or is not a member of this organization.`,
        account_id: c.account_id,
      })),
    );
  }
  const existing = candidates.filter((c) => c.membership_id !== null);
  if (existing.length > 0)
    throw alreadyMembers(
      accountIds,
      existing.map((c) => c.account_id),
    );

  const createdAt = nowIso();
  const rowsJson = JSON.stringify(accountIds.map((accountId) => [newId(), accountId]));
  let inserted: MemberRow[];
  try {
    const [, , rows] = await db.batch([
      db.insert(projectMembers).select(
        db
          .select({
            id: sql<string>`json_extract(j.value, '$[0]')`.as("id"),
            projectId: sql<string>`${projectId}`.as("project_id"),
            accountId: sql<string>`json_extract(j.value, '$[1]')`.as("account_id"),
            role: sql<ProjectRole>`${role}`.as("role"),
            createdAt: sql<string>`${createdAt}`.as("created_at"),
          })
          .from(sql`json_each(${rowsJson}) AS j`),
      ),
      // One entry for the request: the project gained these members.
      auditEntry(ctx, {
        target: { type: "project", id: projectId },
        projectId,
        changes: { members: { from: null, to: accountIds.map((account_id) => ({ account_id, role })) } },
      }),
      memberQuery(
        db,
        project.orgId,
        and(
          eq(projectMembers.projectId, projectId),
          inArray(projectMembers.accountId, sql`(SELECT value FROM json_each(${idsJson}))`),
        ),
      ),
    ]);
    inserted = rows;
  } catch (err) {
    // Another request added one of these accounts since the check above.
    if (isUniqueViolation(err)) throw alreadyMembers(accountIds, []);
    throw err;
  }
  const byAccount = new Map(inserted.map((r) => [r.membership.accountId, toMemberRecord(r)]));
  return accountIds.map((id) => {
    const record = byAccount.get(id);
    if (!record) throw new Error(`member ${id} missing after insert`);
    return record;
  });
}

function alreadyMembers(accountIds: string[], ids: string[]) {
  return conflict(
    ids.length > 0
      ? "Some accounts are already members of this project; nothing was added."
      : "An account became a member of this project meanwhile; nothing was added.",
    ids.map((id) => ({
      path: `account_ids.${accountIds.indexOf(id)}`,
      message: `Account ${id} is already a member of this project.`,
      account_id: id,
    })),
  );
}

/**
 * A new project role. The member record's read-only fields may be echoed back as read: they
 * change nothing, and `project_id` and `account_id` must name this member.
 */
export async function replaceProjectMember(
  ctx: CallerContext,
  projectId: string,
  accountId: string,
  input: MemberReplaceInput,
): Promise<MemberRecord> {
  const { db, identity } = ctx;
  assertEchoMatches(input, { project_id: projectId, account_id: accountId });
  const { role } = input;
  const { project } = await loadProject(db, identity, projectId, "manage");
  const target = and(eq(projectMembers.projectId, projectId), eq(projectMembers.accountId, accountId));
  const read = await ifMatchGuard(ctx, project.orgId, target);
  // One batch is one transaction: the read sees the update's result, and an empty update
  // with a present row means the last-owner guard (or If-Match) refused it.
  const allowed = and(target, role === "owner" ? undefined : keepsAnOwner(projectId), read?.guard);
  const [, updated, row] = await db.batch([
    // Before the update, to read the role it replaces; written exactly when the update applies.
    auditEntry(ctx, {
      target: { type: "project_member", id: accountId },
      projectId,
      when: sql`EXISTS (SELECT 1 FROM project_members WHERE ${allowed})`,
      // Null when the role stays what it is (API_CONTRACT §14: the fields that changed, or null).
      changes: sql`(SELECT CASE WHEN role = ${role} THEN NULL ELSE json_object('role', json_object('from', role, 'to', ${role})) END FROM project_members WHERE ${target})`,
    }),
    db.update(projectMembers).set({ role }).where(allowed).returning({ id: projectMembers.id }),
    memberQuery(db, project.orgId, target),
  ]);
  const member = row[0];
  if (!member) throw memberNotFound();
  if (updated.length === 0) {
    if (read) await explainMiss(db, projectMembers, read.membership, "Member");
    throw lastOwner();
  }
  return toMemberRecord(member);
}

export async function removeProjectMember(
  ctx: CallerContext,
  projectId: string,
  accountId: string,
): Promise<void> {
  const { db, identity } = ctx;
  const { project } = await loadProject(db, identity, projectId, "manage");
  const target = and(eq(projectMembers.projectId, projectId), eq(projectMembers.accountId, accountId));
  const read = await ifMatchGuard(ctx, project.orgId, target);
  // The last-owner guard and If-Match's guard: the entry is written exactly when both let the delete apply.
  const allowed = and(target, keepsAnOwner(projectId), read?.guard);
  const [present, , deleted] = await db.batch([
    db.select({ id: projectMembers.id }).from(projectMembers).where(target),
    // Before the delete, to read the role it removes; written exactly when the delete applies.
    auditEntry(ctx, {
      target: { type: "project_member", id: accountId },
      projectId,
      when: sql`EXISTS (SELECT 1 FROM project_members WHERE ${allowed})`,
      changes: sql`(SELECT json_object('role', json_object('from', role, 'to', NULL)) FROM project_members WHERE ${target})`,
    }),
    db.delete(projectMembers).where(allowed).returning({ id: projectMembers.id }),
  ]);
  if (present.length === 0) throw memberNotFound();
  if (deleted.length === 0) {
    if (read) await explainMiss(db, projectMembers, read.membership, "Member");
    throw lastOwner();
  }
}
