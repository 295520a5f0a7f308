/**
 * Entry point for batches of the EVENTS queue and of its dead-letter queue (one consumer
 * Worker for both; `batch.queue` tells them apart). Every message is handled, acknowledged
 * or retried on its own, and the messages of a batch run concurrently, so one slow or
 * failing endpoint never delays or re-sends another's delivery.
 */

import { createDb, type Db } from "../db/client";
import { loggableError } from "../http/errors";
import { finishDisconnect } from "../services/projects";
import { markDeliveryFailed, processDelivery } from "../webhooks/delivery";
import { fanoutEvent } from "../webhooks/fanout";
import type { QueueMessage } from "./messages";

export const EVENTS_QUEUE = "deploy-platform-events";
export const DEAD_LETTER_QUEUE = "deploy-platform-events-dlq";

export async function handleEventsBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  if (batch.queue === DEAD_LETTER_QUEUE) {
    await Promise.all(batch.messages.map((message) => handleDeadLetter(db, message)));
    return;
  }
  const allowInsecure = env.ALLOW_INSECURE_WEBHOOKS === "true";
  await Promise.all(batch.messages.map((message) => handleMessage(db, env, message, allowInsecure)));
}

async function handleMessage(
  db: Db,
  env: Env,
  message: Message<unknown>,
  allowInsecure: boolean,
): Promise<void> {
  const body = message.body as QueueMessage | undefined;
  try {
    switch (body?.kind) {
      case "project.disconnect":
        await finishDisconnect(db, body.project_id);
        message.ack();
        return;
      case "event.fanout":
        await fanoutEvent(db, env.EVENTS, body.event_id);
        message.ack();
        return;
      case "webhook.deliver": {
        const decision = await processDelivery(db, body.delivery_id, message.attempts, { allowInsecure });
        if (decision.action === "ack") message.ack();
        else if (decision.action === "retry") message.retry({ delaySeconds: decision.delaySeconds });
        // The last try: retries are exhausted, so this sends the message to the dead-letter queue.
        else message.retry();
        if (decision.action !== "ack") {
          console.warn(
            JSON.stringify({ msg: "webhook delivery failed", delivery_id: body.delivery_id, ...decision }),
          );
        }
        return;
      }
      default:
        console.error(JSON.stringify({ msg: "dropping queue message of unknown kind", id: message.id }));
        message.ack();
    }
  } catch (err) {
    console.error(
      JSON.stringify({ msg: "queue message failed; will retry", id: message.id, error: loggableError(err) }),
    );
    message.retry();
  }
}

async function handleDeadLetter(db: Db, message: Message<unknown>): Promise<void> {
  const body = message.body as QueueMessage | undefined;
  try {
    switch (body?.kind) {
      case "webhook.deliver":
        await markDeliveryFailed(db, body.delivery_id);
        break;
      case "project.disconnect":
        await finishDisconnect(db, body.project_id);
        break;
      case "event.fanout":
        // Its event keeps `enqueued_at` NULL, so the stale-event sweep fans it out later.
        console.error(JSON.stringify({ msg: "fan-out dead-lettered; left to the sweep", id: body.event_id }));
        break;
      default:
        console.error(JSON.stringify({ msg: "dropping dead letter of unknown kind", id: message.id }));
    }
    message.ack();
  } catch (err) {
    console.error(
      JSON.stringify({ msg: "dead letter failed; will retry", id: message.id, error: loggableError(err) }),
    );
    message.retry();
  }
}
