/**
 * The two sides of a deployment's feed (./object.ts) as the Worker sees them: a write's
 * notification after its commit, and a subscription (one WebSocket) for a stream or a wait.
 */
import type { FeedMessage, FeedUpdate } from "./protocol";

export type FeedNamespace = Env["DEPLOYMENT_FEED"];

const feedOf = (feeds: FeedNamespace, deploymentId: string) => feeds.get(feeds.idFromName(deploymentId));

/**
 * Tells the deployment's feed about a committed write. The runtime marks the errors worth one
 * more try (`retryable`: the object was reset, say by a deploy); any other failure is thrown.
 */
export async function notifyFeed(feeds: FeedNamespace, deploymentId: string, update: FeedUpdate) {
  try {
    await feedOf(feeds, deploymentId).notify(update);
  } catch (err) {
    if (!(err instanceof Error && (err as { retryable?: boolean }).retryable)) throw err;
    await feedOf(feeds, deploymentId).notify(update);
  }
}

export type FeedSubscription = { close(): void };

export type FeedListener = {
  /** Every message, the feed's state first. */
  message(message: FeedMessage): void;
  /** The socket closed without `close()` (the object restarted): updates may have been missed. */
  lost(): void;
};

/**
 * Subscribes to the deployment's feed: a WebSocket to its object, which hibernates while the
 * deployment is idle. `close()` releases the object's end at once (the object answers the close).
 */
export async function subscribeFeed(
  feeds: FeedNamespace,
  deploymentId: string,
  listener: FeedListener,
): Promise<FeedSubscription> {
  const res = await feedOf(feeds, deploymentId).fetch("https://feed.internal/subscribe", {
    headers: { upgrade: "websocket" },
  });
  const socket = res.webSocket;
  if (!socket) throw new Error(`deployment feed refused the subscription (${res.status})`);
  let open = true;
  const lost = () => {
    if (!open) return;
    open = false;
    listener.lost();
  };
  socket.addEventListener("message", (event) => {
    if (open && typeof event.data === "string") listener.message(JSON.parse(event.data) as FeedMessage);
  });
  socket.addEventListener("close", lost);
  socket.addEventListener("error", lost);
  socket.accept();
  return {
    close() {
      if (!open) return;
      open = false;
      try {
        socket.close(1000, "done");
      } catch {
        // Already closing.
      }
    },
  };
}
