/**
 * Messages on the EVENTS queue. The body is the only contract between producer and
 * consumer, so every kind is listed here.
 */
export type ProjectDisconnectMessage = { kind: "project.disconnect"; project_id: string };

/** A committed event to fan out to the project's integrations. */
export type EventFanoutMessage = { kind: "event.fanout"; event_id: string };

export type QueueMessage = ProjectDisconnectMessage | EventFanoutMessage;

export async function enqueueProjectDisconnect(queue: Queue, projectId: string): Promise<void> {
  const message: ProjectDisconnectMessage = { kind: "project.disconnect", project_id: projectId };
  await queue.send(message, { contentType: "json" });
}
