/**
 * What wakes an organization's audit streams (API_CONTRACT §30): every committed audit entry whose
 * organization has an enabled stream. The entry's own INSERT answers whether it has one (in its
 * transaction: src/services/audit/entry.ts), so an entry committed while a stream is on is never
 * missed and an organization without streams costs nothing more. The request never waits: one
 * `audit.streams` message per request and organization goes on the EVENTS queue after the commit,
 * and its consumer wakes each stream's object (src/audit-stream/), which sends in order.
 */
import type { ServiceContext } from "../../context";
import { loggableError } from "../../errors";
import { sendToQueue } from "../events/queue";

/** The organizations a context has already announced: one message per request and organization. */
const announced = new WeakMap<ServiceContext, Set<string>>();

/** Told the result of an audit INSERT once its batch committed (see the file comment). */
export function announceEntry(ctx: ServiceContext, result: D1Result): void {
  const row = (result.results as { orgId?: string | null; streams?: number }[] | undefined)?.[0];
  if (!row?.orgId || !row.streams) return;
  let orgs = announced.get(ctx);
  if (!orgs) {
    orgs = new Set();
    announced.set(ctx, orgs);
  }
  if (orgs.has(row.orgId)) return;
  orgs.add(row.orgId);
  const orgId = row.orgId;
  ctx.waitUntil(
    sendToQueue(ctx, [{ kind: "audit.streams", org_id: orgId }]).catch((err: unknown) =>
      // The entries are committed: the cron's sweep of streams behind their organization's log
      // wakes them (src/services/audit/streams-sweep.ts).
      ctx.log.error("audit stream wake-up not queued; left to the sweep", {
        org_id: orgId,
        error: loggableError(err),
      }),
    ),
  );
}
