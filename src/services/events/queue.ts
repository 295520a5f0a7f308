/**
 * The EVENTS queue: its messages, and how the services put them on it. A message's body is the
 * only contract between producer (the services) and consumer (src/consumer.ts), so every kind is
 * listed here.
 */
import type { ServiceContext } from "../../context";
import { loggableError } from "../../errors";

/**
 * Every message names the organization database its rows are in (src/db/databases.ts), set by
 * `sendToQueue` from the sender's context; absent on one sent before the split: the directory's
 * `DB`, where every row then was.
 */
type InDatabase = { database?: string };

export type ProjectDisconnectMessage = InDatabase & { kind: "project.disconnect"; project_id: string };

/**
 * A committed event to fan out to the project's integrations. `bookmark`: the D1 bookmark of the
 * write that committed it, so the consumer reads the event from a replica at least that fresh
 * (absent on a message sent by hand or before it was added: the consumer reads the primary).
 */
export type EventFanoutMessage = InDatabase & { kind: "event.fanout"; event_id: string; bookmark?: string };

/**
 * One (event, integration) delivery; acknowledged and retried on its own. `series` names the
 * series of attempts the message belongs to (absent: 0, the fan-out's); `manual` marks a series
 * an operator asked for (redeliver, recover): it is sent even while the integration is disabled.
 */
export type WebhookDeliveryMessage = InDatabase & {
  kind: "webhook.deliver";
  delivery_id: string;
  series?: number;
  manual?: boolean;
};

/**
 * An organization's audit log grew while it has an enabled stream (API_CONTRACT §30): its streams'
 * objects are woken to send what follows what each has delivered (src/services/audit/stream-wake.ts).
 */
export type AuditStreamsMessage = InDatabase & { kind: "audit.streams"; org_id: string };

export type QueueMessage =
  | ProjectDisconnectMessage
  | EventFanoutMessage
  | WebhookDeliveryMessage
  | AuditStreamsMessage;

/** Queues accept at most 100 messages per sendBatch. */
const SEND_BATCH_LIMIT = 100;

/** Sends messages now, 100 per `sendBatch` (the queue's limit), each naming `ctx`'s database; a failure throws. */
export async function sendToQueue(ctx: ServiceContext, sent: readonly QueueMessage[]): Promise<void> {
  const queue = ctx.eventsQueue;
  const messages = sent.map((message) => ({ ...message, database: message.database ?? ctx.database }));
  if (messages.length === 1 && messages[0]) {
    await queue.send(messages[0], { contentType: "json" });
    return;
  }
  for (let i = 0; i < messages.length; i += SEND_BATCH_LIMIT) {
    const chunk = messages.slice(i, i + SEND_BATCH_LIMIT);
    await queue.sendBatch(chunk.map((body) => ({ body, contentType: "json" as const })));
  }
}

/**
 * Hands a committed event to the queue for its fan-out without holding up the caller
 * (`waitUntil`). A failed send is logged and left to the stale-event sweep (./fanout.ts): the
 * event is already durable in D1. Called once the event's batch committed, so the session's
 * bookmark is that of the write (or later): the fan-out's read starts from it.
 */
export function publishAfterCommit(ctx: ServiceContext, eventId: string): void {
  const bookmark = ctx.session.bookmark();
  const message: EventFanoutMessage = { kind: "event.fanout", event_id: eventId };
  if (bookmark) message.bookmark = bookmark;
  ctx.waitUntil(
    sendToQueue(ctx, [message]).catch((err: unknown) =>
      ctx.log.error("event publish failed; left to the sweep", {
        event_id: eventId,
        error: loggableError(err),
      }),
    ),
  );
}
