/**
 * `DeploymentFeed`: one Durable Object per deployment (by its id), through which every committed
 * change of the deployment reaches the live streams and waits that follow it (API_CONTRACT §19),
 * so that none of them queries D1 while the deployment does not change.
 *
 * Who holds what, and why. The Worker that serves a stream or a wait holds the client's
 * response and one WebSocket to this object; the object holds the other ends with the
 * Hibernation API (`acceptWebSocket`). While nothing happens the object is evicted from memory
 * with its sockets still open, and Durable Objects bill duration only while in memory and not
 * hibernatable (Cloudflare, "Durable Objects pricing"); the Workers, waiting on I/O, bill no CPU.
 * An object that held the SSE responses itself would stay in memory, billed for every second of
 * every open stream. A write wakes it with one RPC (`notify`), it forwards the update to every
 * socket and goes back to sleep. Measured locally, 200 streams opened, pushed to, and dropped
 * leave no socket behind (test/properties/timeline/streams.test.ts).
 *
 * The object keeps one small record in its storage — the highest `seq` it was told of, the
 * deployment's last status and version, and whether it was deleted — and sends it to each new
 * subscriber, so one that read D1 a moment before an update reached the object learns that it
 * must read again (or that the deployment is gone). It is forgotten an hour after the deployment
 * is final or deleted: every subscriber has met it by then (a stream lasts 15 minutes, a wait 60 s).
 */
import { DurableObject } from "cloudflare:workers";
import { type DeploymentStatus, FINAL_DEPLOYMENT_STATUSES } from "../db/schema";
import { type Migration, migrate } from "../lib/do-migrations";
import { type FeedMessage, type FeedUpdate, feedMessages } from "./protocol";

type FeedState = { lastSeq: number; status?: DeploymentStatus; updatedAt?: string; deleted?: true };

const STATE_KEY = "state";
const FORGET_AFTER_FINAL_MS = 3600_000;

/**
 * The feed's tables, as every object's are kept (src/lib/do-migrations.ts): none yet. Its state is
 * one record of the storage's key-value API (`STATE_KEY`), which needs no table of its own; a
 * table the feed ever needs is migration 1 here. An empty list touches no storage.
 */
const MIGRATIONS: readonly Migration[] = [];

export class DeploymentFeed extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Synchronous (SQLite storage never awaits), so nothing runs before it: no need to block.
    migrate(ctx.storage, MIGRATIONS);
  }

  private state(): FeedState {
    return (this.ctx.storage.kv.get(STATE_KEY) as FeedState | undefined) ?? { lastSeq: 0 };
  }

  /** A subscriber: `Upgrade: websocket`; its first message is the feed's state. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected a WebSocket upgrade.", { status: 426 });
    }
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    const state = this.state();
    const hello: FeedMessage = { last_seq: state.lastSeq };
    if (state.status) hello.status = state.status;
    if (state.updatedAt) hello.updated_at = state.updatedAt;
    if (state.deleted) hello.deleted = true;
    server.send(JSON.stringify(hello));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A committed write: remember how far the timeline goes, then tell every subscriber. */
  async notify(update: FeedUpdate): Promise<void> {
    const state = this.state();
    const last = update.entries[update.entries.length - 1]?.seq ?? 0;
    const next: FeedState = { ...state, lastSeq: Math.max(state.lastSeq, last) };
    // Notifications of two writes may arrive in either order: the later version wins.
    if (update.status && update.updatedAt && (!state.updatedAt || update.updatedAt > state.updatedAt)) {
      next.status = update.status;
      next.updatedAt = update.updatedAt;
    }
    if (update.deleted) next.deleted = true;
    this.ctx.storage.kv.put(STATE_KEY, next);
    if (next.deleted || (next.status && FINAL_DEPLOYMENT_STATUSES.includes(next.status))) {
      await this.ctx.storage.setAlarm(Date.now() + FORGET_AFTER_FINAL_MS);
    }
    const messages = feedMessages(update, next.lastSeq);
    for (const socket of this.ctx.getWebSockets()) {
      try {
        for (const message of messages) socket.send(message);
      } catch {
        // A socket closing as we send: its Worker has gone, nothing is owed to it.
      }
    }
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }

  // Subscribers send nothing; a close from their side is answered, which releases the socket.
  override webSocketMessage(): void {}

  override webSocketClose(socket: WebSocket, code: number, reason: string): void {
    try {
      socket.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // Already closed (the runtime may have answered the close itself).
    }
  }

  override webSocketError(socket: WebSocket): void {
    try {
      socket.close(1011, "error");
    } catch {
      // Already closed.
    }
  }
}
