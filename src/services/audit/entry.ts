/**
 * Writing the audit log (API_CONTRACT §14): one entry per successful state change, reveal, key
 * creation and key revocation, written in the same D1 batch (one transaction) as the change.
 *
 * Everything an entry says about the request (its action = the matched route's operationId, the
 * actor, request id, ip, user agent) comes from the request context; a service names only what
 * it changed (`target`, `changes`, and the project when there is one) and puts `auditEntry(…)`
 * into its batch right after the write it records. The entry is written only if that write
 * changed a row (`changes() > 0`), so a write that matched nothing (a lost race) leaves no entry:
 * no change without its entry, no entry without its change.
 *
 * The entry of a write made under an Idempotency-Key also records the key and the request's
 * fingerprint, under a unique index: the key commits with the change or not at all, and a second
 * execution of a committed key fails whole (API_CONTRACT §11; src/idempotency/executed.ts).
 */
import { Column, getTableColumns, is, SQL, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { prebuilt } from "../../db/compiled";
import { BoundStatement, bindStatement, driverValue } from "../../db/compiled-inserts";
import { type KeyedRow, keyedSelectList } from "../../db/keyed-select";
import { type AuditActorType, type AuditChanges, auditLog } from "../../db/schema";
import { type Spilled, spill } from "../../db/spill";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { announceEntry } from "./stream-wake";

export type AuditTarget = { type: string; id: string };

export type AuditInput = {
  target: AuditTarget;
  /** The project the change is in, if any (a SQL expression when only the database knows it). */
  projectId?: string | SQL | null;
  /**
   * The organization. Defaults to the caller's (a /v1 request), else the project's (read in the
   * same statement), else none: only an internal account create belongs to no organization.
   */
  orgId?: string | null;
  /**
   * The changed fields, or a SQL expression of their JSON (when only the database knows `from`;
   * its text values then go through `auditTextSql` / `auditText`).
   */
  changes?: AuditChanges | SQL | null;
  /**
   * When the entry is written. Default: only if the statement just before it in the batch
   * changed a row. `"always"`: unconditionally (a reveal, whose entry is the only write). A SQL
   * condition: for an entry that must precede its write to read the values it replaces (the
   * condition is the write's own, so both happen or neither, in the one transaction).
   */
  when?: "always" | SQL;
  /** The entry's id, when the caller must find it again (a compensating undo). */
  id?: string;
  /**
   * The API key that acted, for a request made without one: the key a token exchange made acts
   * in its own creation's entry (API_CONTRACT §27). Default: the request's caller, or the admin.
   */
  actor?: { accountId: string; apiKeyId: string };
};

/**
 * The most characters of one string value an entry keeps. D1 refuses a row over 2,000,000 bytes,
 * and free text fields (a project's icon, a resource's physical ID and reason) may each hold
 * most of a 1 MiB body, once before and once after a change. A longer string is kept as its
 * first AUDIT_TEXT_MAX characters and a note of how many were left out, so no entry outgrows its
 * row (a resource report's six strings: under 1.2 MB even if every character took six bytes of
 * JSON) and the change it records is never refused for it.
 */
export const AUDIT_TEXT_MAX = 32_768;

const omittedNote = (omitted: number) => `…[+${omitted} characters]`;

/** `text` as an entry keeps it (AUDIT_TEXT_MAX); counts characters, never splits a surrogate pair. */
export function auditText(text: string): string {
  if (text.length <= AUDIT_TEXT_MAX) return text;
  const chars = Array.from(text);
  if (chars.length <= AUDIT_TEXT_MAX) return text;
  return chars.slice(0, AUDIT_TEXT_MAX).join("") + omittedNote(chars.length - AUDIT_TEXT_MAX);
}

/** `value` with every string in it (at any depth) as an entry keeps it. */
function auditValue(value: unknown): unknown {
  if (typeof value === "string") return auditText(value);
  if (Array.isArray(value)) return value.map(auditValue);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, auditValue(member)]));
}

/** The same for a text column read by the database (`from` as stored): SQLite counts characters too. */
export function auditTextSql(column: SQL): SQL {
  // A literal, not a parameter: D1 binds a JS number as a REAL, and the note would read `….0`.
  const max = sql.raw(String(AUDIT_TEXT_MAX));
  return sql`CASE WHEN length(${column}) > ${max} THEN substr(${column}, 1, ${max}) || '…[+' || (length(${column}) - ${max}) || ' characters]' ELSE ${column} END`;
}

/** Fields whose values never enter an entry, whatever record they are in. */
const SECRET_FIELDS = new Set([
  "value",
  "signing_secret",
  "key",
  "key_hash",
  "secret",
  "previous_signing_secret",
]);

/**
 * `{field: {from, to}}` over the top-level fields that differ between two versions of a record
 * (null before a create, null after a delete), never a secret field; null when nothing differs.
 */
export function diffRecords(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  omit: readonly string[] = [],
): AuditChanges | null {
  const out: AuditChanges = {};
  const fields = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const field of fields) {
    if (SECRET_FIELDS.has(field) || omit.includes(field)) continue;
    const from = before ? (before[field] ?? null) : null;
    const to = after ? (after[field] ?? null) : null;
    if (JSON.stringify(from) !== JSON.stringify(to)) out[field] = { from, to };
  }
  return Object.keys(out).length ? out : null;
}

/** The request facts every entry of this context carries; throws outside a request. */
function requestFacts(ctx: ServiceContext) {
  const request = ctx.request;
  if (!request?.operationId) {
    // A programming error: only a request (public or internal) writes audit entries.
    throw new Error("auditEntry outside a request with an operationId");
  }
  const identity = ctx.identity;
  const keyed = ctx.idempotency;
  return {
    action: request.operationId,
    actorType: identity ? ("api_key" as AuditActorType) : ("admin" as AuditActorType),
    actorAccountId: identity?.accountId ?? null,
    actorApiKeyId: identity?.keyId ?? null,
    requestId: ctx.requestId,
    ip: request.ip,
    userAgent: request.userAgent,
    idempotencyKey: keyed?.key ?? null,
    idempotencyFingerprint: keyed?.fingerprint ?? null,
  };
}

/** `changes` with every string in its values as an entry keeps it (auditValue). */
function auditChanges(changes: AuditChanges): AuditChanges {
  const kept: AuditChanges = {};
  for (const [field, change] of Object.entries(changes)) {
    kept[field] = { from: auditValue(change.from), to: auditValue(change.to) };
  }
  return kept;
}

/**
 * The entry's organization, named once by the INSERT's SELECT (`FROM (SELECT <org> AS o) AS org`)
 * and read by its columns from there: it may be a subquery with parameters of its own (a project's
 * organization), and D1 binds at most 100 parameters a statement.
 */
const ORG = sql.raw("org.o");
const fromOrg = (orgId: SQL | string | null) => sql` FROM (SELECT ${orgId} AS o) AS org`;

/**
 * The entry's `sequence` (API_CONTRACT §30): one more than its organization's latest, read by the
 * INSERT itself (one step down `audit_log_org_sequence_idx`), so the numbers follow commit order
 * with no gap and no repeat whoever writes at once (D1 runs one batch at a time); none for an
 * entry of no organization.
 */
const NEXT_SEQUENCE = sql.raw(
  "CASE WHEN org.o IS NULL THEN NULL ELSE (SELECT coalesce(max(sequence), 0) + 1 FROM audit_log WHERE org_id = org.o) END",
);

/**
 * What the INSERT answers: the entry's organization and the IDs of its enabled audit streams,
 * comma-separated (NULL: none), values of the same transaction, so an entry committed while a
 * stream is on is always announced to it, and the request wakes each stream with no read of its
 * own (./stream-wake.ts). No row when the entry was not written.
 */
const ANNOUNCEMENT = {
  orgId: sql<string | null>`${sql.raw("audit_log.org_id")}`.as("orgId"),
  streams: sql<
    string | null
  >`${sql.raw("(SELECT group_concat(id) FROM audit_streams WHERE audit_streams.org_id = audit_log.org_id AND audit_streams.enabled = 1)")}`.as(
    "streams",
  ),
};

/**
 * An entry whose every field is a value (no SQL expression: the common case) is written by a
 * statement whose text is built once (src/db/compiled-inserts.ts), generated into
 * src/db/prebuilt-statements.ts: every write's first request in an isolate, and every write
 * after it, runs it without Drizzle's builder. The same INSERT … SELECT as the builder's, its
 * values bound through each column's own encoding.
 */
const auditColumns = getTableColumns(auditLog);
/** A placeholder for every column: made only where the text is built (never, once generated). */
const placeholders = () => {
  const row = Object.fromEntries(
    Object.keys(auditColumns).map((key) => [key, sql`${sql.placeholder(key)}`]),
  ) as KeyedRow<typeof auditLog>;
  return { ...row, orgId: ORG, sequence: NEXT_SEQUENCE };
};
const writtenAfterChange = prebuilt("audit:after-change", (b) =>
  b
    .insert(auditLog)
    .select(
      sql`SELECT ${keyedSelectList(auditLog, placeholders())}${fromOrg(sql`${sql.placeholder("orgId")}`)} WHERE changes() > 0`,
    )
    .returning(ANNOUNCEMENT),
);
const writtenAlways = prebuilt("audit:always", (b) =>
  b
    .insert(auditLog)
    .select(
      sql`SELECT ${keyedSelectList(auditLog, placeholders())}${fromOrg(sql`${sql.placeholder("orgId")}`)}`,
    )
    .returning(ANNOUNCEMENT),
);

/** The audit insert to put in the service's batch (see the file comment). */
export function auditEntry(ctx: ServiceContext, input: AuditInput): BoundStatement {
  const facts = requestFacts(ctx);
  if (input.actor) {
    facts.actorType = "api_key";
    facts.actorAccountId = input.actor.accountId;
    facts.actorApiKeyId = input.actor.apiKeyId;
  }
  const projectId = input.projectId ?? null;
  const orgId =
    input.orgId !== undefined
      ? input.orgId
      : ctx.identity
        ? ctx.identity.orgId
        : projectId !== null
          ? sql`(SELECT org_id FROM projects WHERE id = ${projectId})`
          : null;
  const id = input.id ?? newId();
  // Values are stored as their JSON, in the entry's row or, too large for one, in parts (../../db/spill.ts).
  const stored: Spilled | null =
    input.changes && !is(input.changes, SQL) ? spill(JSON.stringify(auditChanges(input.changes))) : null;
  const inline = stored?.inline ?? null;
  // A keyed write's entry carries its Idempotency-Key, so the key is taken exactly when the change
  // commits. Its id is noted: a 5xx releases the key of whichever noted entry was written.
  ctx.idempotency?.entryIds.push(id);
  // Every column by name but the sequence, which the statement computes; the SELECT list follows
  // the INSERT's column list (src/db/keyed-select.ts).
  const row: Omit<KeyedRow<typeof auditLog>, "sequence"> = {
    id,
    orgId,
    projectId,
    action: facts.action,
    targetType: input.target.type,
    targetId: input.target.id,
    actorType: facts.actorType,
    actorAccountId: facts.actorAccountId,
    actorApiKeyId: facts.actorApiKeyId,
    requestId: facts.requestId,
    ip: facts.ip,
    userAgent: facts.userAgent,
    // Bound as the JSON text it already is (a value, so the prebuilt statement still applies).
    changes: is(input.changes, SQL) ? input.changes : null,
    createdAt: nowIso(),
    idempotencyKey: facts.idempotencyKey,
    idempotencyFingerprint: facts.idempotencyFingerprint,
    changesSpilled: stored && stored.inline === null ? stored.length : null,
  };
  const followers = stored ? partInserts(ctx, id, stored.parts) : [];
  const announced = (result: D1Result) => announceEntry(ctx, result);
  const values = Object.values(row).every((value) => !is(value, SQL) && !is(value, Column));
  if (values && (input.when === undefined || input.when === "always")) {
    const bound: Record<string, unknown> = {};
    for (const [key, column] of Object.entries(auditColumns)) {
      if (key !== "sequence") bound[key] = driverValue(column, row[key as keyof typeof row]);
    }
    bound.changes = inline;
    const statement = (input.when === "always" ? writtenAlways : writtenAfterChange)();
    return bindStatement(ctx.db, statement, bound, announced, followers);
  }
  const condition =
    input.when === "always" ? sql`` : input.when ? sql` WHERE ${input.when}` : sql` WHERE changes() > 0`;
  const built = ctx.db
    .insert(auditLog)
    .select(
      sql`SELECT ${keyedSelectList(auditLog, { ...row, changes: row.changes ?? (inline === null ? null : sql`${inline}`), orgId: ORG, sequence: NEXT_SEQUENCE })}${fromOrg(orgId)}${condition}`,
    )
    .returning(ANNOUNCEMENT)
    .toSQL();
  return new BoundStatement(ctx.db, built.sql, built.params, announced, followers);
}

/** An entry's spilled parts (../../db/spill.ts), each written only if the entry was. */
function partInserts(ctx: ServiceContext, entryId: string, parts: readonly string[]): BoundStatement[] {
  return parts.map(
    (chunk, part) =>
      new BoundStatement(
        ctx.db,
        "INSERT INTO audit_log_parts (entry_id, part, chunk) SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM audit_log WHERE id = ?1)",
        [entryId, part, chunk],
      ),
  );
}
