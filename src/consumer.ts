/**
 * Entry point for batches of the EVENTS queue and of its dead-letter queue (one consumer
 * Worker for both; `batch.queue` tells them apart). Every message is handled, acknowledged
 * or retried on its own, and the messages of a batch run concurrently.
 *
 * No message here waits on a webhook receiver: a fan-out hands the event's deliveries to their
 * integrations' delivery lanes (src/delivery-lane/), which make the attempts, each lane on its
 * own. A batch lasts a few D1 round trips, so a receiver that hangs delays neither another
 * tenant's deliveries nor the project work (a disconnect) on this queue.
 *
 * Each message gets a service context of its own (no identity; its id as `request_id`), so
 * the consumer calls the same services as the HTTP routes and its log lines name the message.
 */
import { eq } from "drizzle-orm";
import { createServiceContext, inDatabase, type ServiceContext, withSession } from "./context";
import { DIRECTORY } from "./db/databases";
import { movingOrgs } from "./db/schema";
import { PRIMARY, type SessionStart, startAfter } from "./db/session";
import { isOrganizationMoved, loggableError } from "./errors";
import { createLogger } from "./lib/log";
import { wakeOrgStreams } from "./services/audit/stream-wake";
import { fanoutEvent } from "./services/events/fanout";
import type { QueueMessage } from "./services/events/queue";
import { markDeliveryFailed } from "./services/integrations/dead-letter";
import { scheduleDeliveries } from "./services/integrations/lane-client";
import { entryOf } from "./services/integrations/lane-protocol";
import { integrationOf } from "./services/integrations/sweep";
import { finishDisconnect } from "./services/projects/disconnect";

export const EVENTS_QUEUE = "deploy-platform-events";
export const DEAD_LETTER_QUEUE = "deploy-platform-events-dlq";

export async function handleEventsBatch(
  batch: MessageBatch<unknown>,
  env: Env,
  exec?: ExecutionContext,
): Promise<void> {
  const contextOf = (message: Message<unknown>) =>
    createServiceContext({
      env,
      requestId: message.id,
      session: sessionStartOf(message),
      database: databaseOf(message),
      ...(exec ? { waitUntil: (work: Promise<unknown>) => exec.waitUntil(work) } : {}),
    });
  const wakes: Wakes = new Map();
  const handle = batch.queue === DEAD_LETTER_QUEUE ? handleDeadLetter : handleMessage;
  await Promise.all(
    batch.messages.map(async (message) => {
      let ctx: ServiceContext;
      try {
        ctx = contextOf(message);
      } catch (err) {
        // Its context could not be built (the configuration being changed): this message waits, no other.
        createLogger({ request_id: message.id }).error("queue message has no context; will retry", {
          error: loggableError(err),
        });
        message.retry();
        return;
      }
      await handle(ctx, message, wakes);
    }),
  );
}

/** The organization database a message's rows are in (./services/events/queue.ts). */
function databaseOf(message: Message<unknown>): string {
  const database = (message.body as QueueMessage | undefined)?.database;
  return typeof database === "string" ? database : DIRECTORY;
}

/**
 * A fan-out's first try reads from the bookmark its event's write left (a replica that has the
 * event); a retried one reads the primary, as does every other message.
 */
function sessionStartOf(message: Message<unknown>): SessionStart {
  const body = message.body as QueueMessage | undefined;
  return body?.kind === "event.fanout" && message.attempts <= 1 ? startAfter(body.bookmark) : PRIMARY;
}

/**
 * A fan-out whose replica read raced a change on the primary (an integration deleted since, whose
 * row its batch then refuses by its foreign key) is settled at once on the primary, as a retry
 * would be, rather than a queue retry later.
 */
async function fanout(ctx: ServiceContext, eventId: string, again: boolean): Promise<void> {
  try {
    await fanoutEvent(ctx, eventId, { again });
  } catch (err) {
    // A move's fence is no replica's lag: the message follows the move (handleMessage).
    if (ctx.session.start.mode !== "bookmark" || isOrganizationMoved(err)) throw err;
    ctx.log.warn("fan-out from a replica failed; again on the primary", {
      event_id: eventId,
      error: loggableError(err),
    });
    await fanoutEvent(withSession(ctx, ctx.openSession(PRIMARY)), eventId, { again: true });
  }
}

/**
 * A batch's wake-ups of audit streams, by database and organization: a request whose own wake-up
 * failed sends one message (src/services/audit/stream-wake.ts), so a batch may hold several for one
 * organization, and its streams are woken once for all of them (one read of its streams, one call
 * to each stream's object). The messages share the outcome: acknowledged together, or retried
 * together.
 */
type Wakes = Map<string, Promise<number>>;

function wakeOnce(ctx: ServiceContext, orgId: string, wakes: Wakes | undefined): Promise<number> {
  if (!wakes) return wakeOrgStreams(ctx, orgId);
  const key = `${ctx.database}/${orgId}`;
  let wake = wakes.get(key);
  if (!wake) {
    wake = wakeOrgStreams(ctx, orgId);
    wakes.set(key, wake);
  }
  return wake;
}

async function handleMessage(ctx: ServiceContext, message: Message<unknown>, wakes?: Wakes): Promise<void> {
  const body = message.body as QueueMessage | undefined;
  try {
    switch (body?.kind) {
      case "project.disconnect":
        await finishDisconnect(ctx, body.project_id);
        message.ack();
        return;
      case "event.fanout":
        await fanout(ctx, body.event_id, message.attempts > 1);
        message.ack();
        return;
      case "audit.streams":
        // The organization's log grew while it has a stream on: each stream's object sends.
        await wakeOnce(ctx, body.org_id, wakes);
        message.ack();
        return;
      case "webhook.deliver": {
        // A delivery message (one queued before the lanes, or sent by hand): to its lane.
        const integrationId = await integrationOf(ctx, body.delivery_id);
        if (integrationId) {
          await scheduleDeliveries(ctx, integrationId, [entryOf(body.delivery_id, body.series ?? 0)]);
        }
        message.ack();
        return;
      }
      default:
        ctx.log.error("dropping queue message of unknown kind");
        message.ack();
    }
  } catch (err) {
    if (isOrganizationMoved(err) && (await followMove(ctx, message))) return;
    ctx.log.error("queue message failed; will retry", { error: loggableError(err) });
    message.retry();
  }
}

/**
 * A message whose write met a move's fence (API_CONTRACT §32): its organization is switching to
 * another database. Once the switch is done (the source says `switched`), the message is handled
 * there; before, it is retried in a moment. Which organization it was is not known here, so it is
 * handled in each database an organization switched to (usually one; a message's rows are in one
 * of them, and handling it where they are not does nothing). True when it was settled so.
 */
async function followMove(ctx: ServiceContext, message: Message<unknown>): Promise<boolean> {
  try {
    const moves = await ctx.db
      .selectDistinct({ to: movingOrgs.toDatabase, switched: movingOrgs.switched })
      .from(movingOrgs)
      .where(eq(movingOrgs.fenced, true))
      .all();
    const switched = moves.filter((move) => move.switched).map((move) => move.to);
    if (switched.length === 0 || switched.length < moves.length) {
      message.retry({ delaySeconds: 2 });
      return true;
    }
    for (const database of switched) {
      await handleMessage(inDatabase(withSession(ctx, ctx.openSession(PRIMARY)), database), message);
    }
    return true;
  } catch (err) {
    ctx.log.error("queue message met a move and could not follow it", { error: loggableError(err) });
    return false;
  }
}

async function handleDeadLetter(ctx: ServiceContext, message: Message<unknown>): Promise<void> {
  const body = message.body as QueueMessage | undefined;
  try {
    switch (body?.kind) {
      case "webhook.deliver":
        await markDeliveryFailed(ctx, body.delivery_id, body.series ?? 0);
        break;
      case "project.disconnect":
        await finishDisconnect(ctx, body.project_id);
        break;
      case "audit.streams":
        // Left to the cron's sweep of streams behind their organization's log.
        ctx.log.error("audit stream wake-up dead-lettered; left to the sweep", { org_id: body.org_id });
        break;
      case "event.fanout":
        // Left to the sweeps: the stale-event sweep if it never wrote its deliveries (the event's
        // `enqueued_at` commits with them), the stuck-delivery sweep if it wrote them and its
        // hand-over to their lanes never happened.
        ctx.log.error("fan-out dead-lettered; left to the sweep", { event_id: body.event_id });
        break;
      default:
        ctx.log.error("dropping dead letter of unknown kind");
    }
    message.ack();
  } catch (err) {
    ctx.log.error("dead letter failed; will retry", { error: loggableError(err) });
    message.retry();
  }
}
