/**
 * Messages on the EVENTS queue. The body is the only contract between producer and
 * consumer, so every kind is listed here.
 */
export type ProjectDisconnectMessage = { kind: "project.disconnect"; project_id: string };

export type QueueMessage = ProjectDisconnectMessage;

export async function enqueueProjectDisconnect(queue: Queue, projectId: string): Promise<void> {
  const message: ProjectDisconnectMessage = { kind: "project.disconnect", project_id: projectId };
  await queue.send(message, { contentType: "json" });
}
