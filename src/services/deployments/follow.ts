/**
 * Following a deployment (API_CONTRACT §19): what a live stream sends, in order, exactly once.
 *
 * A stream opens with one D1 round trip (the lookup that authorizes it and the first entries
 * after its position) and reads further pages only as its client takes them. Once it has sent
 * everything it subscribes to the deployment's feed (src/feed/) and waits: an idle stream queries
 * nothing. Each update the feed pushes carries the entries a write recorded; an entry that follows
 * the last one sent is sent as it comes, and a jump in the numbers (an update missed, or one too
 * large to push) is read from D1 from where the stream stands, on a copy at least as fresh as the
 * write. The feed's first message says how far it knows the timeline goes, which covers a write
 * that landed between the stream's read and its subscription. When the deployment is final and
 * every entry is sent, the stream ends with the record. If the feed's object restarts, the stream
 * subscribes again and reads once what it may have missed; if it cannot, it ends without `end`
 * and the client reconnects with `Last-Event-ID`, losing nothing either way. A deployment deleted
 * with its project ends its streams the same way, and the reconnection is `404`. Before it sends,
 * a stream checks again, at most every 30 s, that its key and its access still hold
 * (`stillAllowed`, through the caller's `recheckAccess`: the stream never holds the key itself);
 * if not, it ends, and the reconnection is refused (API_CONTRACT §5's 60 s).
 */
import { eq } from "drizzle-orm";
import type { CallerContext } from "../../context";
import type { Db } from "../../db/client";
import { bindQuery, columnValues, tableReader } from "../../db/compiled";
import { deployments } from "../../db/schema";
import { PRIMARY, type SessionStart } from "../../db/session";
import { ApiError, loggableError } from "../../errors";
import { type FeedSubscription, subscribeFeed } from "../../feed/client";
import type { FeedMessage } from "../../feed/protocol";
import { Wakeup } from "../../lib/wakeup";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { TimelineEntry } from "../../schemas/timeline";
import { loadScoped, lookupThen, scopedLookup } from "../access";
import { toDeploymentRecord } from "./deployments";
import { isFinal } from "./state";
import { entriesAfter, readTimelineEntry } from "./timeline";

/** Entries per D1 read, and per step sent. */
export const FOLLOW_CHUNK = 500;
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
    scopedLookup(db, identity, deployments, id, "read", "Deployment"),
    entriesAfter(db, id, afterSeq, FOLLOW_CHUNK + 1),
  );
  return new Follower(ctx, toDeploymentRecord(found.row), afterSeq, values.map(readTimelineEntry));
}

export class Follower {
  private lastSent: number;
  /** Entries that follow `lastSent` without a gap, ready to send. */
  private pending: TimelineEntry[] = [];
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

  constructor(
    private readonly ctx: CallerContext,
    private readonly deployment: DeploymentRecord,
    afterSeq: number,
    first: TimelineEntry[],
  ) {
    this.lastSent = afterSeq;
    this.knownLast = afterSeq;
    this.take(first);
    // The read saw the deployment and its entries at one instant: final then, complete then.
    if (isFinal(deployment.status)) this.final = { deployment };
  }

  /** What to send next; `idle` after `idleMs` with nothing new. */
  async next(idleMs: number): Promise<FollowStep> {
    for (;;) {
      if (this.closed) return { kind: "lost" };
      if (this.pending.length) {
        const entries = this.pending.splice(0, FOLLOW_CHUNK);
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
      if (this.final) return { kind: "end", deployment: this.final.deployment ?? (await this.readRecord()) };
      if (!this.subscription) {
        if (!(await this.subscribe())) return { kind: "lost" };
        continue;
      }
      if (!(await this.wakeup.wait(idleMs))) return { kind: "idle" };
    }
  }

  /**
   * Whether the key that opened the stream still authenticates as the same key (`recheckAccess`)
   * and may still read the deployment (a revoked key, a membership removed, the deployment
   * deleted). The key's lookup comes from the isolate's cache when it has one; the access check
   * is one read.
   */
  async stillAllowed(): Promise<boolean> {
    try {
      const identity = await this.ctx.recheckAccess();
      if (!identity) return false;
      await loadScoped(this.db, identity, deployments, this.deployment.id, "read", "Deployment");
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return false;
      throw err;
    }
  }

  /** Releases the subscription at once (the client went away, or the stream ended). */
  close(): void {
    this.closed = true;
    this.subscription?.close();
    this.subscription = null;
    this.wakeup.ring();
  }

  /** D1 rows (up to FOLLOW_CHUNK + 1) after `lastSent` become pending. */
  private take(entries: TimelineEntry[]): void {
    this.more = entries.length > FOLLOW_CHUNK;
    this.pending = entries.slice(0, FOLLOW_CHUNK);
    const last = this.pending[this.pending.length - 1];
    // Nothing there: whatever was announced is not (or no longer) in D1; stop looking for it.
    this.knownLast = last ? Math.max(this.knownLast, last.seq) : this.lastSent;
  }

  /** The request's session, or one as fresh as the latest write announced (opened when read). */
  private get db(): Db {
    return this.fresh ? this.ctx.openSession(this.fresh).db : this.ctx.db;
  }

  private async readMore(): Promise<void> {
    const rows = await entriesAfter(this.db, this.deployment.id, this.lastSent, FOLLOW_CHUNK + 1).raw();
    this.take(rows.map(readTimelineEntry));
  }

  /** After the feed was lost: the record and the entries after `lastSent`, in one round trip. */
  private async readMissed(): Promise<void> {
    this.resync = false;
    const db = this.db;
    const [own, rows] = await db.$client.batch<Record<string, unknown>>([
      bindQuery(db, db.select().from(deployments).where(eq(deployments.id, this.deployment.id))),
      entriesAfter(db, this.deployment.id, this.lastSent, FOLLOW_CHUNK + 1),
    ]);
    const row = own?.results[0];
    if (!row) {
      // Deleted with its project meanwhile: the client's reconnection answers 404.
      this.close();
      return;
    }
    this.take((rows?.results ?? []).map((r) => readTimelineEntry(columnValues(r))));
    const deployment = toDeploymentRecord(tableReader(deployments)(columnValues(row)));
    if (isFinal(deployment.status) && !this.final) this.final = { deployment };
  }

  private async readRecord(): Promise<DeploymentRecord> {
    const row = await this.db.select().from(deployments).where(eq(deployments.id, this.deployment.id)).get();
    return row ? toDeploymentRecord(row) : this.deployment;
  }

  private async subscribe(): Promise<boolean> {
    if (this.resubscribes > RESUBSCRIBES) return false;
    try {
      this.subscription = await subscribeFeed(this.ctx.deploymentFeeds, this.deployment.id, {
        message: (message) => this.onMessage(message),
        lost: () => {
          this.subscription = null;
          this.resync = true;
          this.resubscribes++;
          this.wakeup.ring();
        },
      });
      return true;
    } catch (err) {
      this.ctx.log.error("could not follow the deployment's feed", {
        deployment_id: this.deployment.id,
        error: loggableError(err),
      });
      return false;
    }
  }

  private onMessage(message: FeedMessage): void {
    if (message.deleted) {
      // Deleted with its project: the stream ends without `end`; the client's reconnection is 404.
      this.close();
      return;
    }
    if (message.bookmark || message.last_seq > this.knownLast || message.status) {
      // Later reads must see what this message announces: from a copy that has the write.
      this.fresh = message.bookmark ? { mode: "bookmark", bookmark: message.bookmark } : PRIMARY;
    }
    this.knownLast = Math.max(this.knownLast, message.last_seq);
    for (const entry of message.entries ?? []) {
      if (entry.seq === this.lastSent + this.pending.length + 1) this.pending.push(entry);
    }
    if (message.status && isFinal(message.status) && !this.final) {
      this.final = { deployment: message.deployment ?? null };
    }
    this.wakeup.ring();
  }
}
