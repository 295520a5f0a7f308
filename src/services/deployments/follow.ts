/**
 * Following a deployment (API_CONTRACT §19): what a live stream sends, in order, exactly once.
 *
 * A stream opens with one D1 round trip (the lookup that authorizes it and the first entries
 * after its position) and reads further pages only as its client takes them, each bounded in bytes
 * before it is read (./follow-pending.ts `pageWeight`). Once it has sent
 * everything it subscribes to the deployment's feed (src/feed/) and waits: an idle stream queries
 * nothing. Each update the feed pushes carries the entries a write recorded; an entry that follows
 * the last one sent is sent as it comes, and a jump in the numbers (an update missed, or one too
 * large to push) is read from D1 from where the stream stands, on a copy at least as fresh as the
 * write. The feed's first message says how far it knows the timeline goes, which covers a write
 * that landed between the stream's read and its subscription. When the deployment is final and
 * every entry is sent, the stream ends with the record. If the feed's object restarts, the stream
 * subscribes again and reads once what it may have missed; if it cannot, it ends without `end`
 * and the client reconnects with `Last-Event-ID`, losing nothing either way. A deployment deleted
 * with its project ends its streams the same way, and the reconnection is `404`.
 *
 * The feed pushes whether or not the client reads, so what a client has not taken yet is held
 * here, in the isolate's budget of such bytes (src/lib/stream-buffers.ts: at most
 * STREAM_BUFFER_BOUND a stream, STREAM_BUFFER_BUDGET for all of the isolate's streams, a page read
 * from D1 for its client included); a stream over its share ends (`onEnd`) instead of holding
 * more, and its client resumes from D1 with `Last-Event-ID`: what it was sent is exactly what it
 * received, since an entry leaves this buffer only to be queued whole on the stream.
 *
 * Before it sends, a stream checks again, at most every `streamRecheckMs` (30 s), that its key
 * and its access still hold (./follow-access.ts, through the caller's `recheckAccess`: the stream
 * never holds the key itself); if not, it ends, and the reconnection is refused (API_CONTRACT
 * §5's 60 s). A change of the deployment also starts a timer for that check, so a stream whose
 * client stopped reading ends all the same. An idle deployment starts none: a check is a D1
 * query, and an idle stream costs none (§19); it has nothing to send, and it ends with its 15
 * minutes, or checks at the next change.
 */
import { eq } from "drizzle-orm";
import type { CallerContext } from "../../context";
import type { Db } from "../../db/client";
import { bindQuery, columnValues, tableReader } from "../../db/compiled";
import { deployments } from "../../db/schema";
import { PRIMARY, type SessionStart } from "../../db/session";
import { loggableError } from "../../errors";
import { type FeedSubscription, subscribeFeed } from "../../feed/client";
import type { FeedMessage } from "../../feed/protocol";
import { isolateStreamBuffers } from "../../lib/stream-buffers";
import { Wakeup } from "../../lib/wakeup";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { TimelineEntry } from "../../schemas/timeline";
import { authorizedLookup } from "../access";
import { lookupThen } from "../lookup";
import { toDeploymentRecord } from "./deployments";
import { StreamAccess } from "./follow-access";
import { FOLLOW_CHUNK, PendingEntries, pageWeight } from "./follow-pending";
import { isFinal } from "./state";
import { followEntries, readFollowPage } from "./timeline";

/** Times a stream subscribes again after losing its feed, before it lets its client reconnect. */
const RESUBSCRIBES = 3;

export type FollowStep =
  | { kind: "entries"; entries: TimelineEntry[] }
  | { kind: "end"; deployment: DeploymentRecord }
  | { kind: "idle" }
  /** The feed cannot be reached: the client reconnects (with `Last-Event-ID`). */
  | { kind: "lost" };

/** `getDeploymentTimeline` as a stream: authorizes and reads the first entries after `afterSeq`. */
export async function openFollow(ctx: CallerContext, id: string, afterSeq: number): Promise<Follower> {
  const { db, identity } = ctx;
  const {
    found,
    results: [values],
  } = await lookupThen(
    db,
    authorizedLookup(db, identity, deployments, id, "read", "Deployment"),
    followEntries(db, id, afterSeq, FOLLOW_CHUNK + 1, pageWeight(true)),
  );
  return new Follower(ctx, toDeploymentRecord(found.row), afterSeq, readFollowPage(values));
}

type FollowPage = ReturnType<typeof readFollowPage>;

export class Follower {
  private lastSent: number;
  /** Entries that follow `lastSent` without a gap, ready to send, in the isolate's budget. */
  private readonly pending = new PendingEntries();
  /** The last read stopped at its limit: more entries wait in D1. */
  private more = false;
  /** The highest `seq` known to exist. */
  private knownLast: number;
  private final: { deployment: DeploymentRecord | null } | null = null;
  /** Where reads start once a write was announced: a copy that has it (its bookmark, else the primary). */
  private fresh: SessionStart | null = null;
  private subscription: FeedSubscription | null = null;
  private resubscribes = 0;
  /** The feed was lost: read what may have been missed once subscribed again. */
  private resync = false;
  private closed = false;
  private readonly wakeup = new Wakeup();
  /** Told once the follower ends on its own (see `onEnd`). */
  private ended: (() => void) | undefined;
  /** The key and access checked again while the stream lasts (./follow-access.ts). */
  private readonly access: StreamAccess;

  constructor(
    private readonly ctx: CallerContext,
    private readonly deployment: DeploymentRecord,
    afterSeq: number,
    first: FollowPage,
  ) {
    this.access = new StreamAccess(
      ctx,
      deployment.id,
      () => this.db,
      () => this.close(),
    );
    this.lastSent = afterSeq;
    this.knownLast = afterSeq;
    this.take(first);
    // The read saw the deployment and its entries at one instant: final then, complete then.
    if (isFinal(deployment.status)) this.final = { deployment };
  }

  /**
   * `ended` is called once when the follower ends on its own, whether or not anyone waits in
   * `next`: its buffer overflowed, its access ended, its deployment was deleted. The stream then
   * closes at once (src/http/sse.ts) rather than when its client next reads.
   */
  onEnd(ended: () => void): void {
    this.ended = ended;
  }

  /** What to send next (the last step is written: ./follow-pending.ts); `idle` after `idleMs` with nothing new. */
  async next(idleMs: number): Promise<FollowStep> {
    this.pending.sent();
    for (;;) {
      if (this.endIfDropped() || this.closed) return { kind: "lost" };
      if (this.pending.length) {
        if (!(await this.mayStillSend())) return { kind: "lost" };
        const entries = this.pending.takeStep();
        this.lastSent = (entries[entries.length - 1] as TimelineEntry).seq;
        return { kind: "entries", entries };
      }
      if (this.resync && this.subscription) {
        await this.readMissed();
        continue;
      }
      if (this.more || this.knownLast > this.lastSent) {
        await this.readMore();
        continue;
      }
      if (this.final) {
        const deployment = this.final.deployment ?? (await this.readRecord());
        if (!(await this.mayStillSend())) return { kind: "lost" };
        return { kind: "end", deployment };
      }
      if (!this.subscription) {
        if (!(await this.subscribe())) return { kind: "lost" };
        continue;
      }
      if (!(await this.wakeup.wait(idleMs))) return { kind: "idle" };
    }
  }

  /** Releases the subscription and the buffer at once (the client went away, or the stream ended). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.access.stop();
    this.subscription?.close();
    this.subscription = null;
    this.pending.close();
    this.wakeup.ring();
    this.ended?.();
  }

  /**
   * Ends the stream when another stream of the isolate took its place in the budget (its entries
   * are already let go, unsent): true when it ended. Asked at each of the stream's own events (a
   * message of its feed, its client's read, its heartbeat: the route's), since the drop happened
   * in another request, which may not touch this one's sockets.
   */
  endIfDropped(): boolean {
    if (!this.pending.dropped || this.closed) return false;
    this.ctx.log.info("a live stream was over its share of the isolate's buffer budget; the stream ends", {
      deployment_id: this.deployment.id,
      last_sent: this.lastSent,
      budget: isolateStreamBuffers.usage(),
    });
    this.close();
    return true;
  }

  /** Whether the stream may send (and the follower is still open); a stream no longer allowed ends. */
  private async mayStillSend(): Promise<boolean> {
    if (!(await this.access.mayStillSend())) this.close();
    return !this.closed;
  }

  /**
   * A page read from D1 after `lastSent` (up to FOLLOW_CHUNK + 1 rows, cut at `pageWeight`)
   * becomes pending, as much of it as the budget allows (./follow-pending.ts); the rest, and what
   * the cut left out, is read again once these are sent.
   */
  private take({ entries, rows }: FollowPage): void {
    const kept = this.pending.fill(entries.slice(0, FOLLOW_CHUNK));
    this.more = rows > kept;
    const last = this.pending.last();
    // Nothing there: whatever was announced is not (or no longer) in D1; stop looking for it.
    this.knownLast = last ? Math.max(this.knownLast, last.seq) : this.lastSent;
  }

  /** The request's session, or one as fresh as the latest write announced (opened when read). */
  private get db(): Db {
    return this.fresh ? this.ctx.openSession(this.fresh).db : this.ctx.db;
  }

  private async readMore(): Promise<void> {
    const page = await this.page(this.db).raw();
    this.take(readFollowPage(page));
  }

  /** After the feed was lost: the record and the entries after `lastSent`, in one round trip. */
  private async readMissed(): Promise<void> {
    this.resync = false;
    const db = this.db;
    const [own, rows] = await db.$client.batch<Record<string, unknown>>([
      bindQuery(db, db.select().from(deployments).where(eq(deployments.id, this.deployment.id))),
      this.page(db),
    ]);
    const row = own?.results[0];
    if (!row) {
      // Deleted with its project meanwhile: the client's reconnection answers 404.
      this.close();
      return;
    }
    this.take(readFollowPage((rows?.results ?? []).map(columnValues)));
    const deployment = toDeploymentRecord(tableReader(deployments)(columnValues(row)));
    if (isFinal(deployment.status) && !this.final) this.final = { deployment };
  }

  /** The next page after `lastSent` (./timeline.ts `followEntries`). */
  private page(db: Db): D1PreparedStatement {
    return followEntries(db, this.deployment.id, this.lastSent, FOLLOW_CHUNK + 1, pageWeight());
  }

  private async readRecord(): Promise<DeploymentRecord> {
    const row = await this.db.select().from(deployments).where(eq(deployments.id, this.deployment.id)).get();
    return row ? toDeploymentRecord(row) : this.deployment;
  }

  private async subscribe(): Promise<boolean> {
    if (this.resubscribes > RESUBSCRIBES) return false;
    let first = true;
    try {
      const subscription = await subscribeFeed(this.ctx.deploymentFeeds, this.deployment.id, {
        message: (message) => {
          this.onMessage(message, first);
          first = false;
        },
        lost: () => {
          this.subscription = null;
          this.resync = true;
          this.resubscribes++;
          this.wakeup.ring();
        },
      });
      // Ended while it subscribed (its time, its place, its access): the socket goes at once.
      if (this.closed) {
        subscription.close();
        return false;
      }
      this.subscription = subscription;
      return true;
    } catch (err) {
      this.ctx.log.error("could not follow the deployment's feed", {
        deployment_id: this.deployment.id,
        error: loggableError(err),
      });
      return false;
    }
  }

  /** `first`: the subscription's first message, the feed's state rather than a change. */
  private onMessage(message: FeedMessage, first: boolean): void {
    if (this.endIfDropped()) return;
    if (message.deleted) {
      // Deleted with its project: the stream ends without `end`; the client's reconnection is 404.
      this.close();
      return;
    }
    if (message.bookmark || message.last_seq > this.knownLast || message.status) {
      // Later reads must see what this message announces: from a copy that has the write.
      this.fresh = message.bookmark ? { mode: "bookmark", bookmark: message.bookmark } : PRIMARY;
    }
    if (!first || message.last_seq > this.knownLast) this.access.noteChange();
    this.knownLast = Math.max(this.knownLast, message.last_seq);
    for (const entry of message.entries ?? []) {
      if (entry.seq !== this.lastSent + this.pending.length + 1) continue;
      if (!this.pending.push(entry)) {
        // The client has not taken what it was sent, and this stream may hold no more (its bound,
        // or its share of the isolate's budget): it resumes from D1 with `Last-Event-ID`.
        this.ctx.log.info("a live stream's client fell behind; the stream ends", {
          deployment_id: this.deployment.id,
          last_sent: this.lastSent,
          buffered: this.pending.held,
          budget: isolateStreamBuffers.usage(),
        });
        this.close();
        return;
      }
    }
    if (message.status && isFinal(message.status) && !this.final) {
      this.final = { deployment: message.deployment ?? null };
    }
    this.wakeup.ring();
  }
}
