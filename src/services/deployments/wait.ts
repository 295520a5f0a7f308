/**
 * `waitForDeployment` (API_CONTRACT §19): the deployment record as soon as it is final, or as it
 * stands when the wait's time is up. One D1 read opens the wait (the lookup that authorizes it);
 * then it listens to the deployment's feed (src/feed/), which pushes each change with the record,
 * so a wait on an idle deployment queries nothing while it waits. D1 is read again when the feed
 * announces a change without the record (a record too large to push, or the feed's first message
 * saying it moved since the lookup), after the feed was lost, since a change may have gone by
 * meanwhile, and once when the time is up on a record that is not final: a change whose notice
 * never reached the feed (lost with the isolate that wrote it, after its answer) is there. A
 * deployment deleted with its project while waited on is `404`: the feed says so
 * (src/services/projects/projects.ts tells it).
 */
import { eq } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { deployments } from "../../db/schema";
import { PRIMARY, type SessionStart } from "../../db/session";
import { loggableError, notFound } from "../../errors";
import { type FeedSubscription, subscribeFeed } from "../../feed/client";
import type { FeedMessage } from "../../feed/protocol";
import { Wakeup } from "../../lib/wakeup";
import type { DeploymentRecord } from "../../schemas/deployment";
import { loadAuthorized } from "../access";
import { toDeploymentRecord } from "./deployments";
import { isFinal } from "./state";

/** Times a wait subscribes again after losing its feed; then it waits out its time and reads D1. */
const RESUBSCRIBES = 3;

export async function waitForDeployment(
  ctx: CallerContext,
  id: string,
  timeoutMs: number,
): Promise<DeploymentRecord> {
  const { row } = await loadAuthorized(ctx.db, ctx.identity, deployments, id, "read", "Deployment");
  let record = toDeploymentRecord(row);
  if (isFinal(record.status)) return record;
  const deadline = Date.now() + timeoutMs;
  const wakeup = new Wakeup();
  /** A change announced without its record: where to read it from. */
  let stale: SessionStart | null = null;
  let lost = false;
  /** Deleted with its project meanwhile (the feed said so): the wait answers 404, as a read now would. */
  let gone = false;
  const onMessage = (message: FeedMessage) => {
    if (message.deleted) gone = true;
    const pushed = message.deployment;
    if (pushed && pushed.id === record.id && pushed.updated_at > record.updated_at) record = pushed;
    else if (message.updated_at && message.updated_at > record.updated_at) {
      stale = message.bookmark ? { mode: "bookmark", bookmark: message.bookmark } : PRIMARY;
    }
    wakeup.ring();
  };
  const read = async (start: SessionStart) => {
    const fresh = await ctx
      .openSession(start)
      .db.select()
      .from(deployments)
      .where(eq(deployments.id, record.id))
      .get();
    if (fresh) record = toDeploymentRecord(fresh);
  };

  let subscription: FeedSubscription | null = null;
  let resubscribes = 0;
  let readAtEnd = false;
  try {
    while (!gone && !isFinal(record.status) && Date.now() < deadline) {
      if (!subscription && resubscribes <= RESUBSCRIBES) {
        try {
          subscription = await subscribeFeed(ctx.deploymentFeeds, record.id, {
            message: onMessage,
            lost: () => {
              subscription = null;
              lost = true;
              resubscribes++;
              wakeup.ring();
            },
          });
        } catch (err) {
          ctx.log.error("could not follow the deployment's feed", {
            deployment_id: record.id,
            error: loggableError(err),
          });
          resubscribes = RESUBSCRIBES + 1;
        }
        // Subscribed again after a loss: what went by meanwhile is in D1.
        if (subscription && lost) {
          lost = false;
          stale = PRIMARY;
        }
      }
      if (stale) {
        const start = stale;
        stale = null;
        await read(start);
        continue;
      }
      const left = deadline - Date.now();
      if (!subscription) {
        // No feed to listen to: wait out the time, then answer the record as it stands.
        await new Promise((resolve) => setTimeout(resolve, left));
        await read(PRIMARY);
        readAtEnd = true;
        break;
      }
      await wakeup.wait(left);
    }
  } finally {
    subscription?.close();
  }
  if (gone) throw notFound("Deployment");
  // The time is up: "as it stands" is D1's, not the last record the feed pushed.
  if (!isFinal(record.status) && !readAtEnd) await read(PRIMARY);
  return record;
}
