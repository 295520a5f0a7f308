import { createDb } from "../db/client";
import { finishDisconnect } from "../services/projects";
import type { QueueMessage } from "./messages";

/** Entry point for batches of the EVENTS queue: each message is handled and acknowledged on its own. */
export async function handleEventsBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  for (const message of batch.messages) {
    const body = message.body as QueueMessage | undefined;
    try {
      switch (body?.kind) {
        case "project.disconnect":
          await finishDisconnect(db, body.project_id);
          message.ack();
          break;
        default:
          console.error(JSON.stringify({ msg: "dropping queue message of unknown kind", id: message.id }));
          message.ack();
      }
    } catch (err) {
      console.error(
        JSON.stringify({ msg: "queue message failed; will retry", id: message.id, error: String(err) }),
      );
      message.retry();
    }
  }
}
