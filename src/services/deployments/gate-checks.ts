/**
 * Deployment checks (API_CONTRACT §31) as a gate holds them, and the gate's events.
 *
 * A deployment created while its environment's protection has checks waits with `"check"` in
 * `blocked_by`; its gate holds one item per check (copied at its creation, with each check's
 * deadline kept beside the gate: `check_deadlines`). A check concludes by a request
 * (`concludeCheck`, ./checks.ts) or, still pending at its deadline, by itself as its `on_timeout`
 * says (`reason: "timeout"`), through the gate's settling (./gate.ts), which the environment's
 * gate object runs at the deadline without any request. A failed check cancels the deployment; the
 * last pass releases it when nothing else holds it.
 *
 * Every step of a gate writes its event (flag `deployment_gates`) in the same batch as the change:
 * `deployment.waiting` at creation, `deployment.reviewed`, `deployment.check_concluded`,
 * `deployment.released`, `environment.locked` and `environment.unlocked`.
 */
import { eq, inArray, type SQL, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import {
  type CheckDeadline,
  type DeploymentGate,
  deployments,
  events,
  type GateCheck,
} from "../../db/schema";
import type { DeploymentRecord } from "../../schemas/deployment";
import { contained } from "../contained";
import { publishAfterCommit } from "../events/queue";
import { eventInsert, type NewEvent, newEvent } from "../events/write";
import type { DeploymentRow } from "./record";
import { toDeploymentRecord } from "./record";

/** A gate's checks (none for a gate written before checks existed). */
export const checksOf = (gate: DeploymentGate | null): GateCheck[] => gate?.checks ?? [];

/** Whether a check holds the deployment: one is not yet passed. */
export const checksHold = (checks: readonly GateCheck[]) => checks.some((c) => c.state !== "passed");

/** The first failed check, which cancels the deployment. */
export const failedCheck = (checks: readonly GateCheck[]) => checks.find((c) => c.state === "failed");

/** The timeline's reason for a deployment a failed check cancelled. */
export const failedCheckReason = (check: GateCheck) =>
  `Check ${check.name} failed${check.reason === "timeout" ? " (timed out)" : ""}.`;

/**
 * The checks once the pending ones whose deadline passed by `nowMs` have concluded by themselves
 * (`on_timeout`, `reason: "timeout"`), and those that did, in the order their deadlines passed
 * (the gate's order for a tie). The first that fails is the last to conclude: it cancels the
 * deployment, and a check due later stays pending, as it would had each been settled at its own
 * deadline; a settling that comes late (after a crash, say) decides no more than one on time.
 */
export function timeOutChecks(
  checks: readonly GateCheck[],
  deadlines: readonly CheckDeadline[] | null,
  nowMs: number,
  now: string,
): { checks: GateCheck[]; concluded: GateCheck[] } {
  const due = new Map((deadlines ?? []).map((d) => [d.name, { ...d, ms: Date.parse(d.at) }]));
  const overdue = checks
    .filter((check) => check.state === "pending" && (due.get(check.name)?.ms ?? Infinity) <= nowMs)
    .sort((a, b) => (due.get(a.name)?.ms ?? 0) - (due.get(b.name)?.ms ?? 0));
  const concluded: GateCheck[] = [];
  for (const check of overdue) {
    const timedOut: GateCheck = {
      ...check,
      state: due.get(check.name)?.on_timeout === "pass" ? "passed" : "failed",
      reason: "timeout",
      concluded_at: now,
    };
    concluded.push(timedOut);
    if (timedOut.state === "failed") break;
  }
  const byName = new Map(concluded.map((check) => [check.name, check]));
  return { checks: checks.map((check) => byName.get(check.name) ?? check), concluded };
}

/**
 * The next moment the gate changes by itself, or null: its wait timer's end while it holds, and the
 * earliest deadline of a check still pending.
 */
export function nextDue(row: Pick<DeploymentRow, "status" | "gate" | "checkDeadlines">): number | null {
  if (row.status !== "waiting" || !row.gate) return null;
  const times: number[] = [];
  if (row.gate.wait_until && row.gate.blocked_by.includes("wait_timer"))
    times.push(Date.parse(row.gate.wait_until));
  const pending = new Set(
    checksOf(row.gate)
      .filter((c) => c.state === "pending")
      .map((c) => c.name),
  );
  for (const d of row.checkDeadlines ?? []) if (pending.has(d.name)) times.push(Date.parse(d.at));
  return times.length ? Math.min(...times) : null;
}

/**
 * The gate's event of a step, written in that step's batch when `when` holds (`"if-changed"`: the
 * statement just before it changed one row), published once the batch committed. `deployment` is
 * the record as the step left it; `at`, the step's own time, is the event's `created_at`, so that
 * the event log orders a gate's events as their steps happened (each step's time is later than
 * the one before: ./gate.ts `laterThan`).
 */
export function gateEvent(
  ctx: ServiceContext,
  projectId: string,
  type: NewEvent["type"],
  data: Record<string, unknown>,
  when: "always" | "if-changed" | SQL,
  at: string,
) {
  const event = { ...newEvent(projectId, type, data), createdAt: at };
  return { event, insert: eventInsert(ctx.db, event, when) };
}

/**
 * `deployment.check_concluded` for each check a step concluded (at `concludedAt`, the step's own
 * time), and `deployment.released` if it released (at the release's, `next.updated_at`: a moment
 * after, so that the log orders it after them, ./gate.ts `decidedAtOnce`). Each is written only if
 * the statement before it changed one row: in the batch they follow the step's compare-and-set (or
 * its audit entry, written only if that changed its row), each after the one before, so they are
 * written exactly when this step's write is. Not a mark on the row's new `updated_at`: two
 * settlings of one row at once may compute the same time, and the one that lost would then write
 * a second release.
 */
export function settledEvents(
  ctx: ServiceContext,
  next: DeploymentRow,
  concluded: readonly GateCheck[],
  released: boolean,
  concludedAt: string,
) {
  const deployment = toDeploymentRecord(next);
  const out = concluded.map((check) =>
    gateEvent(
      ctx,
      next.projectId,
      "deployment.check_concluded",
      { deployment, check },
      "if-changed",
      concludedAt,
    ),
  );
  if (released) {
    out.push(
      gateEvent(ctx, next.projectId, "deployment.released", { deployment }, "if-changed", next.updatedAt),
    );
  }
  return out;
}

/** The deployment as it is now (undefined: deleted with its project meanwhile). */
export async function currentRecord(ctx: ServiceContext, id: string): Promise<DeploymentRecord | undefined> {
  const row = await ctx.db.select().from(deployments).where(eq(deployments.id, id)).get();
  return row ? toDeploymentRecord(row) : undefined;
}

/**
 * The record a step's settling left, when that is the step's own consequence (§31: an event's
 * `deployment` is the record as its step left it): still waiting or released, with the checks as
 * the step left them. A settling that found the deployment cancelled, or concluded another check
 * by its timeout, carried out another step (a rejection, that timeout, each with its own event):
 * undefined, and the step's event keeps the record its own write left.
 */
export function ownSettling(
  settled: DeploymentRow | undefined,
  step: DeploymentRow,
): DeploymentRecord | undefined {
  if (settled?.status !== "waiting" && settled?.status !== "queued") return undefined;
  const sameChecks = JSON.stringify(checksOf(settled.gate)) === JSON.stringify(checksOf(step.gate));
  return sameChecks ? toDeploymentRecord(settled) : undefined;
}

/**
 * Publishes the gate events of a step whose consequence is decided at once (a review's release or
 * cancel, a check's: §26, §31), once that consequence ran: their `deployment` becomes the record
 * that consequence left (`decided`: the cancel's own, `ownSettling`'s), so that a rejection's
 * `deployment.reviewed` says `cancelled` and an approval's counts it, and never a record another
 * request's change left meanwhile. They are handed to the queue only after, so no receiver
 * sees the record the write alone left; a crash before the rewrite leaves that record (the
 * stale-event sweep publishes it), as does a consequence that failed (the cron finishes it).
 */
export async function publishAsDecided(
  ctx: ServiceContext,
  eventIds: readonly string[],
  decided: DeploymentRecord | undefined,
): Promise<void> {
  if (eventIds.length === 0) return;
  if (decided) {
    await contained(ctx, "gate event not rewritten to its decided record", { event_ids: eventIds }, () =>
      ctx.db
        .update(events)
        .set({ data: sql`json_set(${events.data}, '$.deployment', json(${JSON.stringify(decided)}))` })
        .where(inArray(events.id, [...eventIds]))
        .run(),
    );
  }
  for (const id of eventIds) publishAfterCommit(ctx, id);
}
