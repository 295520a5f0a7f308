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
import { withSpilledChanges } from "../../db/spill";
import { wasCut, weightedPage } from "../../db/weighted-page";
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

type VersionRow = typeof variableVersions.$inferSelect;

/** `rows` (of one scope) with the `changes` of each version too large for its row read back from its parts. */
function withVersionParts(db: Db, rows: VersionRow[]): Promise<VersionRow[]> {
  const [first] = rows;
  if (!first) return Promise.resolve(rows);
  return withSpilledChanges(
    rows,
    (row) => String(row.version),
    (versions) =>
      db.$client
        .prepare(
          "SELECT CAST(version AS TEXT) AS owner, part, chunk FROM variable_version_parts WHERE environment_id = ?1 AND scope = ?2 AND version IN (SELECT value FROM json_each(?3))",
        )
        .bind(first.environmentId, first.scope, JSON.stringify(versions.map(Number))),
  );
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

/**
 * The most bytes of versions' `changes` a page reads, but its first version: a version lists every
 * name a replace or a restore touched (megabytes for a large scope), and an isolate's 128 MB are
 * every request's it runs. A page that reaches it holds fewer than `limit` versions, with
 * `has_more` and a cursor after its last (§4), as an audit log page does (../audit/log.ts).
 */
export const VERSIONS_PAGE_BYTES = 4 * 1024 * 1024;

/** The `listEnvironmentVariableVersions` and `listComponentVariableVersions` operations. */
export async function listVariableVersions(
  ctx: CallerContext,
  parent: VariableParent,
  page: NumberedPageRequest,
): Promise<Page<VariableVersionRecord>> {
  const { db } = ctx;
  const {
    results: [rows],
  } = await lookupThen(
    db,
    parentLookup(db, ctx.identity, parent, "read"),
    weightedPage(
      db,
      versionsPageSelect(db, parent, page).toSQL(),
      page.direction === "desc" ? "version DESC" : "version",
      "length(changes) + coalesce(changes_spilled, 0) + 256",
      VERSIONS_PAGE_BYTES,
    ),
  );
  return toNumberedPage(
    await withVersionParts(
      db,
      rows.map((values) => readVersion(values)),
    ),
    page,
    (row) => row.version,
    (row) => toVersionRecord(parent, row),
    wasCut(rows),
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
  const found = await withVersionParts(db, [readVersion(values)]);
  return toVersionRecord(parent, found[0] as VersionRow);
}
