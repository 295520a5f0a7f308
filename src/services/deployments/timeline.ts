/**
 * A deployment's timeline (API_CONTRACT §19): its status entries, written by the same D1 batch
 * as the change they record; its pages; and the notification of its feed (src/feed/) after a
 * commit, which is how live streams and waits learn of a change without querying D1.
 */
import { and, asc, desc, eq, getTableColumns, gt, notInArray, type SQL, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { bindCompiled, compiled, rowReader } from "../../db/compiled";
import { encodeSeqCursor, type Page } from "../../db/pagination";
import {
  type DeploymentStatus,
  deployments,
  deploymentTimeline,
  FINAL_DEPLOYMENT_STATUSES,
} from "../../db/schema";
import { loggableError } from "../../errors";
import { notifyFeed } from "../../feed/client";
import { type FeedUpdate, passableRecord } from "../../feed/protocol";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { TimelineEntry } from "../../schemas/timeline";
import { authorizedLookup } from "../access";
import { lookupThen } from "../lookup";

type DeploymentRow = typeof deployments.$inferSelect;

/** The list a timeline cursor belongs to (`next_page`). */
export const TIMELINE_CURSOR = "timeline";

const timelineColumns = getTableColumns(deploymentTimeline);
const readTimelineRow = rowReader(timelineColumns);

export type TimelineRow = typeof deploymentTimeline.$inferSelect;

export function toTimelineEntry(row: TimelineRow): TimelineEntry {
  return {
    seq: row.seq,
    type: row.type,
    created_at: row.createdAt,
    stack_id: row.stackId,
    status: row.status,
    status_reason: row.statusReason,
    stream: row.stream,
    message: row.message,
  };
}

/** A row of `entriesAfter`'s values as an entry. */
export const readTimelineEntry = (values: readonly unknown[]) => toTimelineEntry(readTimelineRow(values));

/** The SQL names of the timeline's columns, in `timelineColumns`' order (what `rowReader` reads). */
const TIMELINE_COLUMN_NAMES = Object.values(timelineColumns)
  .map((column) => column.name)
  .join();

/**
 * A live stream's read (./follow.ts): the entries after `afterSeq`, in order, at most `limit`, cut
 * after the first whose weight brings theirs to `weight` or beyond (the first entry always comes);
 * each row is the entry's columns, then how many entries the page held before that cut
 * (`readFollowPage`). An entry weighs what ./follow-pending.ts `entryWeight` makes of it, its text
 * counted in UTF-8 bytes (as a BLOB: SQLite's `length` of a text stops at a NUL character); V8
 * holds a character in at most twice its UTF-8 bytes (an ASCII one in a two-byte string), so what a
 * read brings into the isolate is at most about twice `weight`, and one entry. A range of the primary
 * key; the cut, over at most `limit` rows, is D1's work, so the isolate never receives more.
 */
export function followEntries(db: Db, deploymentId: string, afterSeq: number, limit: number, weight: number) {
  return bindCompiled(db, followQuery(), { id: deploymentId, after: afterSeq, limit, weight });
}

/** `followEntries`' statement (its placeholders `id`, `after`, `limit`, `weight`). */
export function followQuery() {
  return compiled("timeline:follow", () => ({
    toSQL: () => ({
      sql:
        `SELECT ${TIMELINE_COLUMN_NAMES},page_rows FROM (SELECT page.*,` +
        "sum(weight) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS through,count(*) OVER () AS page_rows " +
        `FROM (SELECT ${TIMELINE_COLUMN_NAMES},200+length(CAST(coalesce(message,'') AS BLOB))+length(CAST(coalesce(status_reason,'') AS BLOB)) ` +
        "AS weight FROM deployment_timeline WHERE deployment_id=? AND seq>? ORDER BY seq LIMIT ?) AS page) " +
        "WHERE through-weight<? ORDER BY seq",
      params: ["id", "after", "limit", "weight"].map((name) => sql.placeholder(name)),
    }),
  }));
}

/** The rows of `followEntries` (as values): its entries, and how many the page held before its cut. */
export function readFollowPage(rows: readonly (readonly unknown[])[]): {
  entries: TimelineEntry[];
  rows: number;
} {
  const first = rows[0];
  return {
    entries: rows.map(readTimelineEntry),
    rows: first ? Number(first[first.length - 1]) : 0,
  };
}

/** The entries after `afterSeq`, in order, at most `limit`: a range of the primary key. */
export function entriesAfter(db: Db, deploymentId: string, afterSeq: number, limit: number) {
  const query = compiled("timeline:after", (b) =>
    b
      .select(timelineColumns)
      .from(deploymentTimeline)
      .where(
        and(
          eq(deploymentTimeline.deploymentId, sql.placeholder("id")),
          gt(deploymentTimeline.seq, sql.placeholder("after")),
        ),
      )
      .orderBy(asc(deploymentTimeline.seq))
      .limit(sql.placeholder("limit")),
  );
  return bindCompiled(db, query, { id: deploymentId, after: afterSeq, limit });
}

/** `getDeploymentTimeline`: a page of entries after `afterSeq`, in `seq` order. */
export async function getDeploymentTimeline(
  ctx: CallerContext,
  id: string,
  position: { afterSeq: number; limit: number },
): Promise<Page<TimelineEntry>> {
  const { db, identity } = ctx;
  // The deployment's lookup and the page in one round trip; the page is only used if it passes.
  const {
    results: [values],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, deployments, id, "read", "Deployment"),
    entriesAfter(db, id, position.afterSeq, position.limit + 1),
  );
  const entries = values.slice(0, position.limit).map(readTimelineEntry);
  const page: Page<TimelineEntry> = { data: entries, has_more: values.length > position.limit };
  const last = entries[entries.length - 1];
  if (page.has_more && last) page.next_page = encodeSeqCursor(TIMELINE_CURSOR, last.seq);
  return page;
}

export type StatusEntry = { stackId: string | null; status: DeploymentStatus; statusReason: string | null };

/**
 * The status entries of a change from `before` to `after` (API_CONTRACT §19): the deployment's
 * own, when it entered a status, then each stack that entered one, in `stack_ids` order.
 */
export function statusEntriesOf(before: DeploymentRow, after: DeploymentRow): StatusEntry[] {
  const out: StatusEntry[] = [];
  if (after.status !== before.status) out.push({ stackId: null, status: after.status, statusReason: null });
  const was = new Map((before.data.stacks ?? []).map((s) => [s.id, s.status]));
  for (const stack of after.data.stacks ?? []) {
    if (was.get(stack.id) !== stack.status) {
      out.push({ stackId: stack.id, status: stack.status, statusReason: stack.status_reason ?? null });
    }
  }
  return out;
}

/**
 * The insert of status entries, for the change's own batch: numbered after the deployment's last
 * entry by the statement itself, so entries recorded at once by other writers never share or skip
 * a number (D1 runs one batch at a time). `"if-changed"`: only if the statement just before it
 * changed exactly one row (a transition's compare-and-set, through its audit entry and event, as
 * src/services/events/write.ts does), so the entries exist exactly when the change does.
 * Answers the numbers given (RETURNING).
 */
export function statusEntriesInsert(
  db: Db,
  deploymentId: string,
  entries: readonly StatusEntry[],
  createdAt: string,
  when: "always" | "if-changed",
) {
  const list = JSON.stringify(
    entries.map((e) => ({ stack_id: e.stackId, status: e.status, status_reason: e.statusReason })),
  );
  const condition: SQL = when === "if-changed" ? sql` WHERE changes() = 1` : sql``;
  // Columns in the table's order (src/db/timeline-table.ts).
  return db
    .insert(deploymentTimeline)
    .select(
      sql`SELECT ${deploymentId}, base.n + e.key + 1, 'status', ${createdAt}, json_extract(e.value, '$.stack_id'), json_extract(e.value, '$.status'), json_extract(e.value, '$.status_reason'), NULL, NULL FROM json_each(${list}) AS e, (SELECT coalesce(max(seq), 0) AS n FROM deployment_timeline WHERE deployment_id = ${deploymentId}) AS base${condition}`,
    )
    .returning({ seq: deploymentTimeline.seq });
}

/**
 * A new deployment's first entry (§19): its own status as its INSERT, in the same batch, decided
 * it (`queued`, or `waiting` in a protected environment, §26), numbered 1.
 */
export function creationEntryInsert(db: Db, deploymentId: string) {
  // Columns in the table's order (src/db/timeline-table.ts).
  return db
    .insert(deploymentTimeline)
    .select(
      sql`SELECT id, 1, 'status', created_at, NULL, status, NULL, NULL, NULL FROM deployments WHERE id = ${deploymentId}`,
    );
}

/** The entries an insert recorded, from the numbers it answered. */
export function recordedEntries(
  entries: readonly StatusEntry[],
  numbered: readonly { seq: number }[],
  createdAt: string,
): TimelineEntry[] {
  const first = Math.min(...numbered.map((n) => n.seq));
  return entries.map((e, i) => ({
    seq: first + i,
    type: "status",
    created_at: createdAt,
    stack_id: e.stackId,
    status: e.status,
    status_reason: e.statusReason,
    stream: null,
    message: null,
  }));
}

/**
 * Tells the deployment's feed what a committed write recorded, without holding up the writer
 * (`waitUntil`); with the write's D1 bookmark, so a follower that reads what it missed reads it
 * from a copy that has it. A notification that fails twice is logged: the followers learn of the
 * change with the next one (the numbers jump, and they read D1) or when they reconnect.
 */
export function notifyFollowers(
  ctx: ServiceContext,
  deploymentId: string,
  entries: TimelineEntry[],
  moved?: DeploymentRecord,
): void {
  const update: FeedUpdate = { entries };
  if (moved) {
    update.status = moved.status;
    update.updatedAt = moved.updated_at;
    const deployment = passableRecord(moved);
    if (deployment) update.deployment = deployment;
  }
  const bookmark = ctx.session.bookmark();
  if (bookmark) update.bookmark = bookmark;
  tellFeed(ctx, deploymentId, update);
}

/**
 * Deployments that may still be followed (not final), at most this many, are told when their
 * project is deleted. A stream of any other ends within its 15 minutes, a wait within its 60 s.
 */
export const TOLD_OF_DELETION = 1000;

/** The project's deployments that are not final, newest first: the ones whose followers wait. */
export function followedDeployments(db: Db, projectId: string) {
  return db
    .select({ id: deployments.id })
    .from(deployments)
    .where(
      and(
        eq(deployments.projectId, projectId),
        notInArray(deployments.status, [...FINAL_DEPLOYMENT_STATUSES]),
      ),
    )
    .orderBy(desc(deployments.createdAt))
    .limit(TOLD_OF_DELETION);
}

/** Tells the feeds of deployments deleted with their project: their waits answer 404, their streams end. */
export function notifyDeleted(ctx: ServiceContext, deploymentIds: readonly string[]): void {
  for (const id of deploymentIds) tellFeed(ctx, id, { entries: [], deleted: true });
}

function tellFeed(ctx: ServiceContext, deploymentId: string, update: FeedUpdate): void {
  ctx.waitUntil(
    notifyFeed(ctx.deploymentFeeds, deploymentId, update).catch((err: unknown) =>
      ctx.log.error("deployment feed notification failed", {
        deployment_id: deploymentId,
        error: loggableError(err),
      }),
    ),
  );
}
