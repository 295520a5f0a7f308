/**
 * The messages of a deployment's feed (./object.ts): what a write tells it after its commit, and
 * what it sends each subscriber. The only contract between the writers (the deployment
 * services), the object and the subscribers (a live stream, a wait), so every field is here.
 */
import type { DeploymentStatus } from "../db/schema";
import type { DeploymentRecord } from "../schemas/deployment";
import type { TimelineEntry } from "../schemas/timeline";

/** What a committed write tells the feed. */
export type FeedUpdate = {
  /** The entries the write recorded, in `seq` order (none for a write that recorded none). */
  entries: TimelineEntry[];
  /** When the write moved the deployment: its status and version (`updated_at`) after it. */
  status?: DeploymentStatus;
  updatedAt?: string;
  /** The record after the write, when small enough to pass along (else subscribers read it). */
  deployment?: DeploymentRecord;
  /** The write's D1 bookmark: a subscriber's read from it sees the write, on any replica. */
  bookmark?: string;
  /** The write deleted the deployment (with its project): its followers end. */
  deleted?: true;
};

/**
 * What a subscriber receives, as JSON text: on subscribing, the feed's state (`last_seq`,
 * `status`, `updated_at`, nothing else); then one message per update, or several for a large one.
 */
export type FeedMessage = {
  /** The highest `seq` the feed has been told of (0: none). */
  last_seq: number;
  entries?: TimelineEntry[];
  status?: DeploymentStatus;
  updated_at?: string;
  deployment?: DeploymentRecord;
  bookmark?: string;
  /** The deployment no longer exists: a wait answers 404, a stream ends (its reconnection gets 404). */
  deleted?: true;
};

/**
 * The most JSON text one message carries. The runtime refuses a WebSocket message over 1 MiB,
 * and a request's log lines alone may come near that (1,000 lines in a 1 MiB body), so an
 * update is split into messages of at most this many characters, and a record larger than it
 * is left out (its subscribers read it from D1; a deployment's `data` may hold ~1.9 MB).
 */
export const MESSAGE_BUDGET = 256 * 1024;

/** An entry's size in the worst case of JSON (every character escaped to six). */
const worstSize = (text: string) => text.length * 6;

/** A record small enough for a message, or undefined. */
export function passableRecord(record: DeploymentRecord | undefined): DeploymentRecord | undefined {
  if (!record) return undefined;
  return JSON.stringify(record).length <= MESSAGE_BUDGET / 2 ? record : undefined;
}

/** The messages that carry `update` to subscribers, given the feed's `last_seq` after it. */
export function feedMessages(update: FeedUpdate, lastSeq: number): string[] {
  const costs = update.entries.map(
    (entry) => 200 + worstSize(entry.message ?? "") + worstSize(entry.status_reason ?? ""),
  );
  // A stack's reason is free text as long as a body: an entry that fits no message is not sent,
  // nor are the others of its update; `last_seq` tells the subscribers to read them from D1.
  const entries = costs.some((cost) => cost > MESSAGE_BUDGET / 2) ? [] : update.entries;
  const chunks: TimelineEntry[][] = [[]];
  let size = 0;
  for (const [i, entry] of entries.entries()) {
    const cost = costs[i] as number;
    const current = chunks[chunks.length - 1] as TimelineEntry[];
    if (current.length > 0 && size + cost > MESSAGE_BUDGET / 2) {
      chunks.push([entry]);
      size = cost;
    } else {
      current.push(entry);
      size += cost;
    }
  }
  return chunks.map((entries, i) => {
    const last = i === chunks.length - 1;
    const message: FeedMessage = { last_seq: last ? lastSeq : (entries[entries.length - 1]?.seq ?? lastSeq) };
    if (entries.length) message.entries = entries;
    if (update.bookmark) message.bookmark = update.bookmark;
    if (last) {
      if (update.status) message.status = update.status;
      if (update.updatedAt) message.updated_at = update.updatedAt;
      if (update.deployment) message.deployment = update.deployment;
      if (update.deleted) message.deleted = true;
    }
    return JSON.stringify(message);
  });
}
