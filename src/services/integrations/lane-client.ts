/**
 * Handing deliveries to their lane (./object.ts), as the services see it. Every notification
 * integration has a lane of its own, so a receiver that hangs holds up its own deliveries and
 * nobody else's (docs/capacity.md, "Tenant isolation"). The fan-out, redeliver, recover and the
 * stuck-delivery sweep all hand deliveries over through `scheduleDeliveries`; the lane keeps each
 * delivery once per series, so handing one over again (a retried fan-out, the sweep) never sends
 * it twice.
 */
import type { ServiceContext } from "../../context";
import type { LaneEntry } from "./lane-protocol";

/** At most this many entries per call to a lane (one RPC, one SQLite transaction). */
export const SCHEDULE_CHUNK = 500;

/**
 * Hands `entries`, deliveries of `integrationId` due now, to the integration's lane; returns how
 * many were new to it (an entry it already holds in the same or a newer series is left alone). A
 * failure throws: nothing of the failed call was taken.
 */
export async function scheduleDeliveries(
  ctx: ServiceContext,
  integrationId: string,
  entries: readonly LaneEntry[],
): Promise<number> {
  const lanes = ctx.deliveryLanes;
  const lane = lanes.get(lanes.idFromName(integrationId));
  let added = 0;
  for (let i = 0; i < entries.length; i += SCHEDULE_CHUNK) {
    const chunk = entries.slice(i, i + SCHEDULE_CHUNK).map((entry) => ({ ...entry, database: ctx.database }));
    added += await lane.schedule(chunk);
  }
  return added;
}

/** `entries` grouped by integration, each group handed to its lane, all at once. */
export async function scheduleByIntegration(
  ctx: ServiceContext,
  entries: readonly (LaneEntry & { integrationId: string })[],
): Promise<void> {
  const groups = new Map<string, LaneEntry[]>();
  for (const { integrationId, ...entry } of entries) {
    const group = groups.get(integrationId);
    if (group) group.push(entry);
    else groups.set(integrationId, [entry]);
  }
  await Promise.all(
    [...groups].map(([integrationId, group]) => scheduleDeliveries(ctx, integrationId, group)),
  );
}
