/**
 * A scope's versions as records (API_CONTRACT §18): the `list…VariableVersions` and
 * `get…VariableVersion` operations, each one D1 batch with the lookup of the scope's parent. Who
 * changed which names, when: never a value. How versions are written and a scope's state at one
 * is read: ./history.ts.
 */
import { sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import type { Db } from "../../db/client";
import { bindQuery, tableReader } from "../../db/compiled";
import { type NumberedPageRequest, type Page, toNumberedPage } from "../../db/pagination";
import { variableVersions } from "../../db/schema";
import { notFound } from "../../errors";
import type { VariableVersionRecord } from "../../schemas/variable-set";
import { lookupThen } from "../lookup";
import { inVariableSet, parentLookup, type VariableParent } from "./parent";

const readVersion = tableReader(variableVersions);

function toVersionRecord(
  parent: VariableParent,
  row: typeof variableVersions.$inferSelect,
): VariableVersionRecord {
  return {
    version: row.version,
    scope: { type: parent.kind, id: parent.id },
    created_at: row.createdAt,
    actor: {
      type: row.actorType === "admin" ? "admin" : "api_key",
      account_id: row.actorAccountId,
      api_key_id: row.actorApiKeyId,
    },
    request_id: row.requestId,
    changes: row.changes,
  };
}

/** A keyset page of the scope's versions by number; apart so that its plan can be tested. */
export function versionsPageSelect(db: Db, parent: VariableParent, page: NumberedPageRequest) {
  const v = variableVersions.version;
  const desc = page.direction === "desc";
  const after =
    page.after === undefined ? sql`` : desc ? sql` AND ${v} < ${page.after}` : sql` AND ${v} > ${page.after}`;
  return db
    .select()
    .from(variableVersions)
    .where(sql`${inVariableSet(variableVersions, parent)}${after}`)
    .orderBy(desc ? sql`${v} DESC` : sql`${v} ASC`)
    .limit(page.limit + 1);
}

/** The `listEnvironmentVariableVersions` and `listComponentVariableVersions` operations. */
export async function listVariableVersions(
  ctx: CallerContext,
  parent: VariableParent,
  page: NumberedPageRequest,
): Promise<Page<VariableVersionRecord>> {
  const { db } = ctx;
  const query = versionsPageSelect(db, parent, page);
  const {
    results: [rows],
  } = await lookupThen(db, parentLookup(db, ctx.identity, parent, "read"), bindQuery(db, query));
  return toNumberedPage(
    rows.map((values) => readVersion(values)),
    page,
    (row) => row.version,
    (row) => toVersionRecord(parent, row),
  );
}

/** The `getEnvironmentVariableVersion` and `getComponentVariableVersion` operations. */
export async function getVariableVersion(
  ctx: CallerContext,
  parent: VariableParent,
  version: number,
): Promise<VariableVersionRecord> {
  const { db } = ctx;
  const query = db
    .select()
    .from(variableVersions)
    .where(sql`${inVariableSet(variableVersions, parent)} AND ${variableVersions.version} = ${version}`);
  const {
    results: [rows],
  } = await lookupThen(db, parentLookup(db, ctx.identity, parent, "read"), bindQuery(db, query));
  const [values] = rows;
  if (!values) throw notFound(`Version ${version} of this scope`);
  return toVersionRecord(parent, readVersion(values));
}
