/**
 * The engine's log lines (API_CONTRACT §19): `internalAppendDeploymentLogs`. One statement
 * records every line or none: it numbers them after the timeline's last entry and inserts them
 * only while the deployment is not final, every `stack_id` is one of its stacks, and the
 * timeline stays within MAX_TIMELINE_ENTRIES — checked by the insert itself, so a transition or
 * another request landing at the same moment cannot slip between the check and the write.
 */
import { eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { deployments, deploymentTimeline, FINAL_DEPLOYMENT_STATUSES } from "../../db/schema";
import { badInput, conflict, notFound } from "../../errors";
import { nowIso } from "../../lib/time";
import { MAX_TIMELINE_ENTRIES, type TimelineEntry } from "../../schemas/timeline";
import type { LogLinesAnswer, LogLinesInput } from "../../schemas/timeline-writes";
import { auditEntry } from "../audit/entry";
import { isFinal } from "./state";
import { notifyFollowers } from "./timeline";

const FINAL_LIST = sql.raw(FINAL_DEPLOYMENT_STATUSES.map((s) => `'${s}'`).join(", "));
const MAX_ENTRIES = sql.raw(String(MAX_TIMELINE_ENTRIES));

/** The timeline's last `seq` of deployment `id`, as SQL (0 for none). */
const lastSeqOf = (id: string) =>
  sql`(SELECT coalesce(max(seq), 0) FROM deployment_timeline WHERE deployment_id = ${id})`;

export async function appendDeploymentLogs(
  ctx: ServiceContext,
  id: string,
  input: LogLinesInput,
): Promise<LogLinesAnswer> {
  const { db } = ctx;
  const now = nowIso();
  const lines = input.lines.map((l) => ({
    message: l.message,
    stream: l.stream,
    stack_id: l.stack_id ?? null,
  }));
  const count = sql.raw(String(lines.length));
  const stackIds = [...new Set(lines.flatMap((l) => (l.stack_id ? [l.stack_id] : [])))];
  // Columns in the table's order (src/db/timeline-table.ts); the lines in request order.
  const insert = db
    .insert(deploymentTimeline)
    .select(
      sql`SELECT d.id, base.n + l.key + 1, 'log', ${now}, json_extract(l.value, '$.stack_id'), NULL, NULL, json_extract(l.value, '$.stream'), json_extract(l.value, '$.message') FROM deployments AS d, (SELECT coalesce(max(seq), 0) AS n FROM deployment_timeline WHERE deployment_id = ${id}) AS base, json_each(${JSON.stringify(lines)}) AS l WHERE d.id = ${id} AND d.status NOT IN (${FINAL_LIST}) AND base.n + ${count} <= ${MAX_ENTRIES} AND NOT EXISTS (SELECT 1 FROM json_each(${JSON.stringify(stackIds)}) AS s WHERE s.value NOT IN (SELECT value FROM json_each(d.stack_ids)))`,
    )
    .returning({ seq: deploymentTimeline.seq });
  const [numbered] = await db.batch([
    insert,
    // Never a line itself (an engine's output may hold anything): how far the timeline went.
    auditEntry(ctx, {
      target: { type: "deployment", id },
      projectId: sql`(SELECT project_id FROM deployments WHERE id = ${id})`,
      changes: sql`json_object('last_seq', json_object('from', ${lastSeqOf(id)} - ${count}, 'to', ${lastSeqOf(id)}))`,
    }),
  ]);
  if (numbered.length === 0) return refusal(ctx, id, input);
  const first = Math.min(...numbered.map((n) => n.seq));
  const entries: TimelineEntry[] = lines.map((l, i) => ({
    seq: first + i,
    type: "log",
    created_at: now,
    stack_id: l.stack_id,
    status: null,
    status_reason: null,
    stream: l.stream,
    message: l.message,
  }));
  notifyFollowers(ctx, id, entries);
  return { first_seq: first, last_seq: first + lines.length - 1 };
}

/** Why nothing was recorded: one read of the deployment, after the insert that refused the lines. */
async function refusal(ctx: ServiceContext, id: string, input: LogLinesInput): Promise<never> {
  const row = await ctx.db
    .select({
      status: deployments.status,
      stackIds: deployments.stackIds,
      last: sql<number>`${lastSeqOf(id)}`,
    })
    .from(deployments)
    .where(eq(deployments.id, id))
    .get();
  if (!row) throw notFound("Deployment");
  const known = new Set(row.stackIds);
  const strangers = input.lines.flatMap((line, i) =>
    line.stack_id && !known.has(line.stack_id)
      ? [{ path: `lines.${i}.stack_id`, message: "Not a stack of this deployment." }]
      : [],
  );
  if (strangers.length) throw badInput("Every `stack_id` must be a stack of the deployment.", strangers);
  if (isFinal(row.status)) {
    throw conflict(`The deployment is \`${row.status}\`: a finished deployment's log takes no more lines.`);
  }
  if (row.last + input.lines.length > MAX_TIMELINE_ENTRIES) {
    throw conflict(
      `A deployment's timeline holds at most ${MAX_TIMELINE_ENTRIES} entries: it holds ${row.last}, and these ${input.lines.length} lines would pass that.`,
      [{ path: "lines", message: `At most ${MAX_TIMELINE_ENTRIES - row.last} more entries fit.` }],
    );
  }
  // Unreachable while the rules hold (a final status, a full timeline and a deployment's stacks
  // never change back): answered as a conflict rather than a 500 all the same.
  throw conflict("The deployment changed while the lines were recorded; send them again.");
}
