/**
 * Audit log streams (API_CONTRACT §30): create, list, read, update, delete and replay. What they
 * send, and how, is ./stream-delivery.ts (run by the stream's object, src/audit-stream/).
 *
 * Who may: an org `owner` or `admin` acting org-wide (a key restricted to projects is `403
 * unauthorized`, §28); another organization's stream is `404`. A stream's place in its
 * organization's log (`delivered_through`) moves only by an acknowledgement, a replay or its
 * creation; a change of what to send next (a replay, a resume, a new url) bumps its `epoch`, so an
 * acknowledgement of a batch sent before it moves nothing. A pause does not: the receiver's answer
 * to a batch already out is still what it acknowledged (`delivered_through`, §30).
 */
import { and, eq, type SQLWrapper, sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { keyset, type Page, type PageRequest, toPage } from "../../db/pagination";
import { auditStreams } from "../../db/schema";
import { badInput, notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { AuditStreamRecord, CreatedAuditStreamRecord } from "../../schemas/audit-stream";
import type {
  AuditStreamCreateInput,
  AuditStreamReplayInput,
  AuditStreamUpdateInput,
} from "../../schemas/audit-stream-writes";
import { newSigningSecret } from "../../webhooks/signing";
import { authorizeOrgAdmin } from "../access";
import { allowedUrl } from "../integrations/integrations";
import { deleteLatest, ifMatchGuard, unchangedSince, writeLatest } from "../preconditions";
import { auditEntry, diffRecords } from "./entry";

type StreamRow = typeof auditStreams.$inferSelect;

/** The organization's last sequence, for `pending` (one step down `audit_log_org_sequence_idx`). */
const lastSequence = (orgId: SQLWrapper | string) =>
  sql<number>`coalesce((SELECT max(sequence) FROM audit_log WHERE org_id = ${orgId}), 0)`.mapWith(Number);

export function toStreamRecord(row: StreamRow, last: number): AuditStreamRecord {
  return {
    id: row.id,
    org_id: row.orgId,
    name: row.name,
    url: row.url,
    enabled: row.enabled,
    delivered_through: row.deliveredThrough,
    pending: Math.max(0, last - row.deliveredThrough),
    last_error:
      row.lastErrorAt === null
        ? null
        : { at: row.lastErrorAt, status_code: row.lastErrorStatusCode, message: row.lastErrorMessage ?? "" },
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const what = "The organization's audit streams";

/** The caller's own organization, acting org-wide as an owner or admin; another is `404`. */
function authorizeOrg(ctx: CallerContext, orgId: string): void {
  if (orgId !== ctx.identity.orgId) throw notFound("Organization");
  authorizeOrgAdmin(ctx.identity, what);
}

/** A stream of the caller's organization with its organization's last sequence, or `404`; then the caller's right. */
async function readStream(ctx: CallerContext, id: string): Promise<{ row: StreamRow; last: number }> {
  const found = await ctx.db
    // Named with its table: a select list writes a column without it, which inside the subquery would
    // name the audit log's own `org_id`.
    .select({ row: auditStreams, last: lastSequence(sql.raw("audit_streams.org_id")) })
    .from(auditStreams)
    .where(and(eq(auditStreams.id, id), eq(auditStreams.orgId, ctx.identity.orgId)))
    .get();
  if (!found) throw notFound("Audit stream");
  authorizeOrgAdmin(ctx.identity, what);
  return found;
}

/**
 * The organization's last sequence once a write's batch has run, read at its end: its own audit
 * entry counted, so the stream it answers has `pending` as a read right after it would.
 */
const lastAfterWrite = (ctx: CallerContext, id: string) =>
  ctx.db
    .select({ last: lastSequence(sql.raw("audit_streams.org_id")) })
    .from(auditStreams)
    .where(eq(auditStreams.id, id));

const storedUrl = (ctx: CallerContext, url: string) =>
  allowedUrl(url, { allowInsecure: ctx.config.allowInsecureWebhooks });

/** `createAuditStream`: `201` with its signing secret, shown only here. */
export async function createAuditStream(
  ctx: CallerContext,
  orgId: string,
  input: AuditStreamCreateInput,
): Promise<CreatedAuditStreamRecord> {
  authorizeOrg(ctx, orgId);
  const url = storedUrl(ctx, input.url);
  const now = nowIso();
  const id = newId();
  const signingSecret = newSigningSecret();
  const enabled = input.enabled ?? true;
  const { db } = ctx;
  // `from: "now"` starts at the entry that records this creation: the one just after the
  // organization's latest, which the entry below takes in the same batch.
  const through = input.from === "start" ? sql`0` : lastSequence(orgId);
  const insert = db
    .insert(auditStreams)
    .select(
      sql`SELECT ${id}, ${orgId}, ${input.name}, ${url}, ${enabled ? 1 : 0}, ${signingSecret}, ${through}, 0, 0, NULL, NULL, NULL, NULL, ${now}, ${now}, NULL`,
    );
  const read = db
    .select({ row: auditStreams, last: lastSequence(orgId) })
    .from(auditStreams)
    .where(eq(auditStreams.id, id));
  const created = (row: StreamRow | undefined, last: number) => (row ? toStreamRecord(row, last) : undefined);
  const [, , rows] = await db.batch([
    insert,
    auditEntry(ctx, {
      orgId,
      target: { type: "audit_stream", id },
      // The record as created (API_CONTRACT §14), its secret left out: the fields the request knows,
      // and the two that the organization's last sequence decides, read by the entry's own
      // statement (the stream's row took the same value just before it, in this batch; `pending`
      // counts this entry, as the answer does).
      changes: sql`json_set(${JSON.stringify(
        diffRecords(null, {
          id,
          org_id: orgId,
          name: input.name,
          url,
          enabled,
          last_error: null,
          created_at: now,
          updated_at: now,
        }),
      )}, '$.delivered_through', json_object('from', NULL, 'to', ${through}), '$.pending', json_object('from', NULL, 'to', ${lastSequence(orgId)} + 1 - ${through}))`,
    }),
    read,
  ]);
  const record = created(rows[0]?.row, rows[0]?.last ?? 0);
  if (!record) throw new Error("an audit stream created in this batch was not read back by it");
  return { ...record, signing_secret: signingSecret };
}

/** `listAuditStreams`: the organization's streams, §4's pages. */
export async function listAuditStreams(
  ctx: CallerContext,
  orgId: string,
  page: PageRequest,
): Promise<Page<AuditStreamRecord>> {
  authorizeOrg(ctx, orgId);
  const { where, orderBy } = keyset({ createdAt: auditStreams.createdAt, id: auditStreams.id }, page);
  const rows = await ctx.db
    .select({ row: auditStreams, last: lastSequence(orgId) })
    .from(auditStreams)
    .where(and(eq(auditStreams.orgId, orgId), where))
    .orderBy(...orderBy)
    .limit(page.limit + 1)
    .all();
  return toPage(
    rows,
    page,
    (r) => ({ createdAt: r.row.createdAt, id: r.row.id }),
    (r) => toStreamRecord(r.row, r.last),
  );
}

/** `getAuditStream`. */
export async function getAuditStream(ctx: CallerContext, id: string): Promise<AuditStreamRecord> {
  const { row, last } = await readStream(ctx, id);
  return toStreamRecord(row, last);
}

/** `updateAuditStream`: any of name, url, enabled; under If-Match when given. */
export async function updateAuditStream(
  ctx: CallerContext,
  id: string,
  input: AuditStreamUpdateInput,
): Promise<AuditStreamRecord> {
  const { name, url: given, enabled } = input;
  if (name === undefined && given === undefined && enabled === undefined) {
    throw badInput("Nothing to change: give `name`, `url` or `enabled`.", [
      { path: "", message: "At least one of `name`, `url`, `enabled`." },
    ]);
  }
  const { row: read, last } = await readStream(ctx, id);
  const url = given === undefined ? undefined : storedUrl(ctx, given);
  const toRecord = (row: StreamRow) => toStreamRecord(row, last);
  const guard = await ifMatchGuard(ctx, read, toRecord);
  const { db } = ctx;
  return writeLatest(
    db,
    auditStreams,
    read,
    async (before) => {
      const set: Partial<StreamRow> = { updatedAt: nowIso() };
      if (name !== undefined) set.name = name;
      if (url !== undefined) set.url = url;
      if (enabled !== undefined) set.enabled = enabled;
      // What to send next changed: a batch in flight is acknowledged into nothing (it went to
      // another url, or before the pause being lifted), and the stream tries again at once. A
      // pause alone changes nothing of the sending: the receiver's answer to a batch already out
      // still moves `delivered_through` and clears `last_error` (§30), and nothing more is sent.
      const restarts = (url !== undefined && url !== before.url) || (enabled === true && !before.enabled);
      if (restarts) Object.assign(set, { epoch: before.epoch + 1, failures: 0, nextAttemptAt: null });
      const after = { ...before, ...set };
      const [rows, , written] = await db.batch([
        db
          .update(auditStreams)
          .set(set)
          .where(and(eq(auditStreams.id, id), unchangedSince(auditStreams, before)))
          .returning(),
        auditEntry(ctx, {
          target: { type: "audit_stream", id },
          changes: diffRecords(toRecord(before), toRecord(after)),
        }),
        lastAfterWrite(ctx, id),
      ]);
      // A stream that resumes, or now sends elsewhere, is woken by its own entry's announcement
      // (./stream-wake.ts), as every enabled stream of the organization is.
      return rows[0] ? toStreamRecord(rows[0], written[0]?.last ?? last) : undefined;
    },
    { guard, what: "Audit stream" },
  );
}

/** `deleteAuditStream`: `204`; its object finds no stream at its next run and stops. */
export async function deleteAuditStream(ctx: CallerContext, id: string): Promise<void> {
  const { row: read, last } = await readStream(ctx, id);
  const toRecord = (row: StreamRow) => toStreamRecord(row, last);
  const guard = await ifMatchGuard(ctx, read, toRecord);
  await deleteLatest(
    ctx,
    auditStreams,
    read,
    (row) => ({ target: { type: "audit_stream", id }, changes: diffRecords(toRecord(row), null) }),
    { guard, what: "Audit stream" },
  );
}

/**
 * `replayAuditStream`: `from_sequence` 1 to `delivered_through + 1`; the stream goes back and sends
 * again from there, in order (`202`, the stream as the replay left it).
 */
export async function replayAuditStream(
  ctx: CallerContext,
  id: string,
  input: AuditStreamReplayInput,
): Promise<AuditStreamRecord> {
  const { row: read, last } = await readStream(ctx, id);
  const { db } = ctx;
  return writeLatest(
    db,
    auditStreams,
    read,
    async (before) => {
      // `delivered_through` only grows between replays, so a sequence valid once stays valid.
      if (input.from_sequence > before.deliveredThrough + 1) {
        throw badInput(
          `\`from_sequence\` must be 1 to ${before.deliveredThrough + 1} (\`delivered_through\` + 1).`,
          [{ path: "from_sequence", message: `At most ${before.deliveredThrough + 1}.` }],
        );
      }
      const set = {
        deliveredThrough: input.from_sequence - 1,
        epoch: before.epoch + 1,
        failures: 0,
        // A failed batch is no longer what comes next: the first batch from here is.
        retryThrough: null,
        nextAttemptAt: null,
        updatedAt: nowIso(),
      };
      const toRecord = (row: StreamRow) => toStreamRecord(row, last);
      // The fields that changed (§14), as every write of the record names them: from
      // `delivered_through + 1` the position stays, and only `updated_at` moves. `pending`, where
      // the position moved, is read by the entry's own statement, as the create's is: from the
      // organization's last sequence less the old position, to that plus this entry less the new,
      // which is what the answer shows (`last` was read before the write, and other entries may
      // have come since).
      const changed = diffRecords(toRecord(before), toRecord({ ...before, ...set }), ["pending"]);
      const moved = set.deliveredThrough !== before.deliveredThrough;
      const changes = moved
        ? sql`json_set(${JSON.stringify(changed)}, '$.pending', json_object('from', ${lastSequence(before.orgId)} - ${before.deliveredThrough}, 'to', ${lastSequence(before.orgId)} + 1 - ${set.deliveredThrough}))`
        : changed;
      const [rows, , after] = await db.batch([
        db
          .update(auditStreams)
          .set(set)
          .where(
            and(
              eq(auditStreams.id, id),
              eq(auditStreams.epoch, before.epoch),
              eq(auditStreams.deliveredThrough, before.deliveredThrough),
            ),
          )
          .returning(),
        auditEntry(ctx, { target: { type: "audit_stream", id }, changes }),
        lastAfterWrite(ctx, id),
      ]);
      // An enabled stream is woken by the replay's own entry's announcement (./stream-wake.ts).
      return rows[0] ? toStreamRecord(rows[0], after[0]?.last ?? last) : undefined;
    },
    { guard: null, what: "Audit stream" },
  );
}
