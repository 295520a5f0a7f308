/**
 * Messages on the EVENTS queue. The body is the only contract between producer and
 * consumer, so every kind is listed here.
 */
export type ProjectDisconnectMessage = { kind: "project.disconnect"; project_id: string };

/** A committed event to fan out to the project's integrations. */
export type EventFanoutMessage = { kind: "event.fanout"; event_id: string };

/** One (event, integration) delivery; acknowledged and retried on its own. */
export type WebhookDeliveryMessage = { kind: "webhook.deliver"; delivery_id: string };

export type QueueMessage = ProjectDisconnectMessage | EventFanoutMessage | WebhookDeliveryMessage;

export async function enqueueProjectDisconnect(queue: Queue, projectId: string): Promise<void> {
  const message: ProjectDisconnectMessage = { kind: "project.disconnect", project_id: projectId };
  await queue.send(message, { contentType: "json" });
}

/** Queues accept at most 100 messages per sendBatch. */
const SEND_BATCH_LIMIT = 100;

export async function enqueueDeliveries(queue: Queue, deliveryIds: string[]): Promise<void> {
  for (let i = 0; i < deliveryIds.length; i += SEND_BATCH_LIMIT) {
    const chunk = deliveryIds.slice(i, i + SEND_BATCH_LIMIT);
    await queue.sendBatch(
      chunk.map((id) => {
        const body: WebhookDeliveryMessage = { kind: "webhook.deliver", delivery_id: id };
        return { body, contentType: "json" as const };
      }),
    );
  }
}
