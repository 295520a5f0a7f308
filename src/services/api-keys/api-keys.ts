/**
 * API keys (API_CONTRACT §5, §15): the records, the calling key's own, and issuing keys through
 * the internal API. Authenticating a presented key is ./authenticate.ts; a key made by a key is
 * ./create.ts, the key lists ./list.ts and revocation ./revoke.ts.
 */

import { and, eq, getTableColumns, inArray, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { CallerContext, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { insertRow } from "../../db/compiled-inserts";
import { apiKeys, orgMembers, projects } from "../../db/schema";
import { ApiError, badInput, notFound } from "../../errors";
import { recordEtag } from "../../http/etag";
import type { Scope } from "../../http/scopes";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { ApiKeyInfo, ApiKeyRecord, CurrentApiKeyInfo } from "../../schemas/organization";
import type { ApiKeyCreateInput } from "../../schemas/organization-writes";
import { auditEntry, diffRecords } from "../audit/entry";
import { writeKeyBothSides } from "../directory";
import { orgExists } from "../orgs/orgs";
import { generateKey, hashKey, ownLimiter } from "./authenticate";

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** A key's record (API_CONTRACT §21): never the key or its hash. */
export function toApiKeyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    org_id: row.orgId,
    account_id: row.accountId,
    parent_id: row.parentId,
    scopes: row.scopes as Scope[],
    project_ids: row.projectIds,
    expires_at: row.expiresAt,
    last_used_at: row.lastUsedAt,
    revoked_at: row.revokedAt,
    created_at: row.createdAt,
    // A key a trust issued: its token's `sub`, null for a token without one (§27: "where present").
    oidc: row.oidcTrustId ? { trust_id: row.oidcTrustId, subject: row.oidcSubject } : null,
  };
}

/**
 * The ids of the keys `root` selects and of every key made from them, at any depth (`parent_id`),
 * as a subquery: one statement walks the family down the parent index, whatever its size.
 */
export function keyTreeIds(root: SQL): SQL {
  return sql`WITH RECURSIVE tree(id) AS (
      SELECT ${apiKeys.id} FROM ${apiKeys} WHERE ${root}
      UNION SELECT child.id FROM ${apiKeys} AS child JOIN tree ON child.parent_id = tree.id
    )
    SELECT id FROM tree`;
}

/** A key's ETag (API_CONTRACT §12; a new key's 201 carries it): its record as a GET shows it, never the key. */
export const apiKeyEtag = (row: ApiKeyRow): Promise<string> => recordEtag(toApiKeyInfo(row));

/** The record as the calling key reads it (`GET /v1/api-keys/current`), without `revoked_at`. */
export function toCurrentApiKeyInfo(row: ApiKeyRow): CurrentApiKeyInfo {
  const { revoked_at: _revoked, ...info } = toApiKeyInfo(row);
  return info;
}

/** The calling key's record (any valid key may read its own). */
export async function getCurrentApiKey(ctx: CallerContext): Promise<CurrentApiKeyInfo> {
  const row = await ctx.db.select().from(apiKeys).where(eq(apiKeys.id, ctx.identity.keyId)).get();
  // Revoked between authentication and this read: the key is no longer valid.
  if (!row || row.revokedAt) throw new ApiError("unauthenticated", "The API key is not valid.");
  return toCurrentApiKeyInfo(row);
}

/**
 * What a new key's row holds besides what every new key's does. `limiter` left out: the key heads
 * a family of its own (a key of the internal API); a key made from another takes its parent's
 * (API_CONTRACT §28). `oidcTrustId` and `oidcSubject`: only a key a trust issues (§27).
 * `createdAt`: default now; a key whose expiry is counted from its creation passes the instant
 * both are read from.
 */
export type NewKeyFields = Pick<
  ApiKeyRow,
  "orgId" | "accountId" | "createdBy" | "name" | "expiresAt" | "scopes" | "projectIds" | "parentId"
> &
  Partial<Pick<ApiKeyRow, "limiter" | "oidcTrustId" | "oidcSubject" | "createdAt">>;

/** A new key (shown once) and its row, which stores only its hash. */
export async function newKey(fields: NewKeyFields): Promise<{ key: string; row: ApiKeyRow }> {
  const key = generateKey();
  const id = newId();
  const row: ApiKeyRow = {
    id,
    ...fields,
    limiter: fields.limiter ?? ownLimiter(id),
    oidcTrustId: fields.oidcTrustId ?? null,
    oidcSubject: fields.oidcSubject ?? null,
    keyHash: await hashKey(key),
    revokedAt: null,
    lastUsedAt: null,
    createdAt: fields.createdAt ?? nowIso(),
  };
  return { key, row };
}

/** SQL true while the key `keyId` is neither revoked nor expired at `now` (as stored). */
export function keyIsLive(keyId: string, now: string): SQL {
  return sql`EXISTS (SELECT 1 FROM ${apiKeys} AS live WHERE live.id = ${keyId}
    AND live.revoked_at IS NULL AND (live.expires_at IS NULL OR live.expires_at > ${now}))`;
}

/**
 * `INSERT … SELECT` of `row` into `table` that inserts it only while `condition` holds, in the same
 * statement: what a concurrent write does to the condition's rows lands either before it (nothing
 * is inserted) or after it (and sees the new row). The result's `meta.changes` says which.
 */
export function insertWhere<T extends SQLiteTable>(db: Db, table: T, row: T["$inferSelect"], condition: SQL) {
  // Every column, in the table's order: the order of the INSERT's column list.
  const values = row as Record<string, unknown>;
  const selected = sql.join(
    Object.entries(getTableColumns(table) as Record<string, SQLiteColumn>).map(([field, column]) => {
      const value = values[field];
      return value === null || value === undefined ? sql`NULL` : sql.param(value, column);
    }),
    sql`, `,
  );
  return db.insert(table).select(sql`SELECT ${selected} WHERE ${condition}`);
}

/** `["*"]` when absent; duplicates dropped, order kept. */
export function canonicalScopes(scopes: readonly Scope[] | undefined): string[] {
  return scopes ? [...new Set(scopes)] : ["*"];
}

/** Which of `ids` are projects of the organization: one statement, one JSON parameter. */
export function orgProjectsAmong(db: Db, orgId: string, ids: readonly string[]) {
  return (
    db
      .select({ id: projects.id })
      .from(projects)
      // One JSON parameter: up to 100 IDs would pass D1's 100-parameter limit.
      .where(
        and(
          eq(projects.orgId, orgId),
          sql`${projects.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
        ),
      )
  );
}

/** `400 bad_input` naming each entry of `projectIds` that is not among `found` (`orgProjectsAmong`). */
export function refuseUnknownProjects(projectIds: readonly string[], found: readonly { id: string }[]): void {
  const known = new Set(found.map((p) => p.id));
  const issues = projectIds.flatMap((id, i) =>
    known.has(id) ? [] : [{ path: `project_ids.${i}`, message: "Not a project of this organization." }],
  );
  if (issues.length)
    throw badInput("Every `project_ids` entry must be a project of the organization.", issues);
}

/** Every restricted project must be a project of the key's organization (checked in one query). */
export async function checkProjectIds(
  db: Db,
  orgId: string,
  projectIds: readonly string[] | null | undefined,
): Promise<string[] | null> {
  if (!projectIds) return null;
  const wanted = [...new Set(projectIds)];
  refuseUnknownProjects(projectIds, await orgProjectsAmong(db, orgId, wanted).all());
  return wanted;
}

/**
 * The internal API's `internalCreateApiKey`: a key for `account_id`, issued by `created_by`, an
 * owner or admin of the organization, optionally narrowed to scopes and projects.
 */
export async function issueApiKey(
  ctx: ServiceContext,
  orgId: string,
  body: ApiKeyCreateInput,
): Promise<{ created: ApiKeyRecord; etag: string }> {
  const { db } = ctx;
  const input = {
    orgId,
    accountId: body.account_id,
    createdBy: body.created_by,
    name: body.name,
    expiresAt: body.expires_at,
    scopes: body.scopes,
    projectIds: body.project_ids,
  };
  if (!(await orgExists(ctx, input.orgId))) throw notFound("Organization");
  const expiresAt = input.expiresAt ? new Date(input.expiresAt).toISOString() : null;
  if (expiresAt && Date.parse(expiresAt) <= Date.now()) {
    throw badInput("`expires_at` must be in the future.", [
      { path: "expires_at", message: "Must be in the future." },
    ]);
  }
  const members = await db
    .select({ accountId: orgMembers.accountId, role: orgMembers.role })
    .from(orgMembers)
    .where(
      and(
        eq(orgMembers.orgId, input.orgId),
        inArray(orgMembers.accountId, [input.accountId, input.createdBy]),
      ),
    )
    .all();
  const actor = members.find((m) => m.accountId === input.accountId);
  if (!actor) {
    throw badInput("The account is not a member of this organization.", [
      { path: "account_id", message: "Not a member of the organization." },
    ]);
  }
  const issuer = members.find((m) => m.accountId === input.createdBy);
  if (!issuer || (issuer.role !== "owner" && issuer.role !== "admin")) {
    throw new ApiError("unauthorized", "API keys are issued only by an organization owner or admin.");
  }
  const projectIds = await checkProjectIds(db, input.orgId, input.projectIds);
  const { key, row: record } = await newKey({
    orgId: input.orgId,
    accountId: input.accountId,
    createdBy: input.createdBy,
    name: input.name ?? null,
    expiresAt,
    scopes: canonicalScopes(input.scopes),
    projectIds,
    parentId: null,
  });
  const info = toCurrentApiKeyInfo(record);
  await writeKeyBothSides(ctx, record, [
    insertRow(db, apiKeys, record),
    auditEntry(ctx, {
      orgId: record.orgId,
      target: { type: "api_key", id: record.id },
      // The record as `GET /v1/api-keys/current` shows it: never the key or its hash.
      changes: diffRecords(null, { ...info, created_by: record.createdBy }),
    }),
  ]);
  // The new record's ETag (API_CONTRACT §12): the record as a GET of the key shows it, not the key.
  return {
    created: { ...info, key, created_by: record.createdBy },
    etag: await recordEtag(toApiKeyInfo(record)),
  };
}
