/**
 * Messages on the EVENTS queue. The body is the only contract between producer (the services,
 * through the context's events port) and consumer (src/consumer.ts), so every kind is listed here.
 */
export type ProjectDisconnectMessage = { kind: "project.disconnect"; project_id: string };

/** A committed event to fan out to the project's integrations. */
export type EventFanoutMessage = { kind: "event.fanout"; event_id: string };

/**
 * One (event, integration) delivery; acknowledged and retried on its own. `series` names the
 * series of attempts the message belongs to (absent: 0, the fan-out's); `manual` marks a series
 * an operator asked for (redeliver, recover): it is sent even while the integration is disabled.
 */
export type WebhookDeliveryMessage = {
  kind: "webhook.deliver";
  delivery_id: string;
  series?: number;
  manual?: boolean;
};

export type QueueMessage = ProjectDisconnectMessage | EventFanoutMessage | WebhookDeliveryMessage;
