/**
 * The directory's side of a write (src/db/databases.ts). Four operations write on both sides: an
 * organization's creation, an account's copy when it joins an organization, and a key's creation
 * (by the internal API or by a key). No batch spans two databases, so each writes its two sides in
 * the order that leaves nothing visible half-done, and says how what a crash leaves is finished:
 *
 * - a key: the directory's index row first, then the key in its organization's batch. A crash
 *   between them leaves an index row naming no key, which authenticates nothing (the key was
 *   never shown; a lookup finds no key row and answers 401) and costs one small row.
 * - an organization: its organization's batch first (its row, owner and audit entry), then the
 *   directory's row. A crash between them, or a directory that keeps failing, leaves an
 *   organization nobody can reach yet (every path to it goes through the directory); the cron's
 *   `finishOrganizations` writes the directory's row from the copy, so the creation completes, as
 *   its committed audit entry and Idempotency-Key say it did (and as its answer said, when the
 *   directory failed: the creation is answered once its organization's side commits).
 * - an account joining: a copy, written in the organization's batch with the membership.
 *
 * A key's or a trust's index row is taken back when its organization's side is known to have
 * made no record (`writeIndexedBothSides`).
 *
 * When the organization's database is the directory's own, both sides are one batch.
 */
import { and, eq, gte, inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { ServiceContext } from "../context";
import type { Db } from "../db/client";
import { insertRow } from "../db/compiled-inserts";
import { DIRECTORY } from "../db/databases";
import { accounts, apiKeyIndex, organizations } from "../db/schema";
import { PRIMARY } from "../db/session";
import { isOrganizationMoved, limitExceededOf, loggableError } from "../errors";
import { toIso } from "../lib/time";
import { contained } from "./contained";

type Statement = BatchItem<"sqlite">;
type Batch = [Statement, ...Statement[]];

/**
 * The directory: `ctx`'s own session when `ctx` is on it, else a session on the directory's
 * primary. Every caller writes (an internal create, the cron), so `ctx`'s session started on the
 * primary too, and a read here sees the latest directory.
 */
export function directoryDb(ctx: ServiceContext): Db {
  return ctx.database === DIRECTORY ? ctx.db : ctx.openSession(PRIMARY, DIRECTORY).db;
}

/**
 * Writes `org` (statements of `ctx`'s database) and `directory` (statements of the directory),
 * `first` the side a crash between them must leave invisible. Returns the results of `org`'s
 * statements, in order.
 */
export async function writeBothSides(
  ctx: ServiceContext,
  parts: { org: Batch; directory: (db: Db) => Batch; first: "directory" | "organization" },
): Promise<D1Result[]> {
  const { db } = ctx;
  if (ctx.database === DIRECTORY) {
    const directory = parts.directory(db);
    const statements: Batch =
      parts.first === "directory" ? [...directory, ...parts.org] : [...parts.org, ...directory];
    const results = (await db.batch(statements)) as D1Result[];
    return parts.first === "directory" ? results.slice(directory.length) : results.slice(0, parts.org.length);
  }
  const dir = directoryDb(ctx);
  if (parts.first === "directory") {
    await dir.batch(parts.directory(dir));
    return (await db.batch(parts.org)) as D1Result[];
  }
  const results = (await db.batch(parts.org)) as D1Result[];
  // The organization's side is committed (its audit entry holds the request's Idempotency-Key):
  // the write has happened, and answering an error would invite a retry that makes it twice. So
  // the directory's row is tried a few times and, failing that, left to the cron, which writes it
  // from the copy within minutes; the answer is the committed write's.
  for (let attempt = 1; ; attempt++) {
    try {
      await dir.batch(parts.directory(dir));
      return results;
    } catch (err) {
      if (attempt >= DIRECTORY_ATTEMPTS) {
        ctx.log.error("directory side not written; the cron finishes it", { error: loggableError(err) });
        return results;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** How many times the directory's side of a write made on the organization's side first is tried. */
const DIRECTORY_ATTEMPTS = 3;

/**
 * A new record's two sides whose directory side is its index row, written first
 * (`writeBothSides`), and whose `org` starts with the record's INSERT: a key (`writeKeyBothSides`)
 * or an OpenID Connect trust (src/services/oidc/trusts.ts). When that side is known to have made
 * no record, its index row is taken back (`unindex`): its batch was refused by a limit
 * (API_CONTRACT §29: a refused request changes nothing; a CI job retrying a token exchange against
 * a full organization left a row a try) or by a move's fence (§32: a `408` changed nothing), or its
 * conditional INSERT found its condition gone (it changed no row). Any other failure leaves the
 * row, as a crash would (the batch may have committed, its answer lost): it names nothing, and
 * authenticates nothing. Returns the results of `org`'s statements.
 */
export async function writeIndexedBothSides(
  ctx: ServiceContext,
  index: {
    what: "key" | "trust";
    id: string;
    row: (dir: Db) => Statement;
    unindex: (dir: Db) => Promise<unknown>;
  },
  org: Batch,
): Promise<D1Result[]> {
  const unindex = () =>
    contained(
      ctx,
      `a refused ${index.what}'s index row not taken back (it names nothing)`,
      { [`${index.what}_id`]: index.id },
      () => index.unindex(directoryDb(ctx)),
    );
  let results: D1Result[];
  try {
    results = await writeBothSides(ctx, { first: "directory", directory: (dir) => [index.row(dir)], org });
  } catch (err) {
    // Refusals that abort the whole batch in its own statements: it surely made nothing.
    if (limitExceededOf(err) !== undefined || isOrganizationMoved(err)) await unindex();
    throw err;
  }
  if (!results[0]?.meta.changes) await unindex();
  return results;
}

/** A new key's two sides (`writeIndexedBothSides`, its index row `keyIndexRow`). */
export function writeKeyBothSides(
  ctx: ServiceContext,
  key: { id: string; orgId: string; keyHash: string; createdAt: string },
  org: Batch,
): Promise<D1Result[]> {
  return writeIndexedBothSides(
    ctx,
    {
      what: "key",
      id: key.id,
      row: (dir) => keyIndexRow(dir, key),
      unindex: (dir) =>
        dir
          .delete(apiKeyIndex)
          .where(and(eq(apiKeyIndex.keyHash, key.keyHash), eq(apiKeyIndex.keyId, key.id)))
          .run(),
    },
    org,
  );
}

/** The directory's index row of a new key. */
function keyIndexRow(
  db: Db,
  key: { id: string; orgId: string; keyHash: string; createdAt: string },
): Statement {
  return insertRow(db, apiKeyIndex, {
    keyHash: key.keyHash,
    keyId: key.id,
    orgId: key.orgId,
    createdAt: key.createdAt,
  });
}

/** The directory's row of a new organization (the same row as its copy when both are one database). */
export function organizationRow(db: Db, org: typeof organizations.$inferInsert) {
  return db.insert(organizations).values(org).onConflictDoNothing();
}

/** An account as the directory has it (accounts are created there), or undefined. */
export function directoryAccount(ctx: ServiceContext, accountId: string) {
  return directoryDb(ctx).select().from(accounts).where(eq(accounts.id, accountId)).get();
}

/** The copy of an account in an organization's database (a no-op where it is already there). */
export function accountCopy(db: Db, account: typeof accounts.$inferSelect) {
  return db.insert(accounts).values(account).onConflictDoNothing();
}

const IDS_PER_STATEMENT = 90;
const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** How far back the cron looks for organizations whose directory row a crash left unwritten. */
export const FINISH_ORGANIZATIONS_MS = 24 * 3600 * 1000;

/**
 * The cron's half of an organization's creation on another database than the directory: every
 * organization created in this database within FINISH_ORGANIZATIONS_MS that the directory does
 * not know gets its directory row, from the copy. Returns how many were finished.
 */
export async function finishOrganizations(ctx: ServiceContext, nowMs = Date.now()): Promise<number> {
  if (ctx.database === DIRECTORY) return 0;
  const recent = await ctx.db
    .select()
    .from(organizations)
    .where(
      and(
        gte(organizations.createdAt, toIso(nowMs - FINISH_ORGANIZATIONS_MS)),
        eq(organizations.database, ctx.database),
      ),
    )
    .limit(500)
    .all();
  if (recent.length === 0) return 0;
  const dir = directoryDb(ctx);
  // D1 binds at most 100 parameters per statement: the ids are asked in chunks, one batch.
  const [first, ...rest] = chunks(
    recent.map((org) => org.id),
    IDS_PER_STATEMENT,
  ).map((ids) =>
    dir.select({ id: organizations.id }).from(organizations).where(inArray(organizations.id, ids)),
  );
  const known = first ? (await dir.batch([first, ...rest])).flat() : [];
  const knownIds = new Set(known.map((org) => org.id));
  let finished = 0;
  for (const org of recent) {
    if (knownIds.has(org.id)) continue;
    try {
      await organizationRow(dir, org).run();
      finished++;
    } catch (err) {
      ctx.log.error("organization's directory row not written; next run", {
        org_id: org.id,
        error: loggableError(err),
      });
    }
  }
  if (finished) ctx.log.warn("finished organizations a crash left half-created", { finished });
  return finished;
}
