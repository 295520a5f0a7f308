/**
 * What a live stream holds for its client (./follow.ts): the entries after the last one sent, in
 * `seq` order without a gap, and the step last handed to the runtime, counted in the isolate's
 * budget of such bytes (src/lib/stream-buffers.ts). An entry leaves only to be queued whole on the
 * stream, a step at a time, so what the client was sent is exactly what it received. A step stays
 * in the budget until the stream is asked for the next (`sent`): the runtime asks once it has
 * written the last one to the client's connection, and until then holds it, whose client may not
 * be reading.
 */
import { isolateStreamBuffers, stringBytes } from "../../lib/stream-buffers";
import type { TimelineEntry } from "../../schemas/timeline";

/** Entries per D1 read, and at most per step sent. */
export const FOLLOW_CHUNK = 500;
/**
 * At most about this weight per D1 read (./timeline.ts `followEntries`: its entries up to the one
 * that reaches it), whatever room the stream has: a read is in the isolate whole before the budget
 * keeps any of it, so it is bounded before it is made. 500 entries of 8,192 characters would be
 * 4 MiB each, and a burst of streams opening on a long log (clients reconnecting with
 * `Last-Event-ID` after a deploy) would each bring that much at once: 40 of them, 160 MiB, beyond
 * an isolate's 128 MB. A reading client is sent a page in ~32 steps, then the next page is read.
 * Less when the stream's share of the isolate's budget is less (`pageWeight`): a page beyond it
 * would make the stream one that others' reservations drop, although its client reads.
 */
export const FOLLOW_PAGE_WEIGHT = 512 * 1024;

/** The weight of a stream's next D1 read: FOLLOW_PAGE_WEIGHT, or its share of the budget if less (`opening`: its buffer is not open yet). */
export const pageWeight = (opening = false) =>
  Math.max(1, Math.min(FOLLOW_PAGE_WEIGHT, Math.floor(isolateStreamBuffers.share(opening ? 1 : 0))));
/**
 * At most this weight per step sent (at least one entry): what one write to the client queues. From
 * a stream whose client does not read, the runtime takes a few steps more than the kernel's queues
 * hold, and only the last is in the isolate's budget, so a step is small: measured locally, 40 paused
 * streams left 9–10 MB in the Worker's process with steps of 64 KiB, 4.5–5.4 MB with these
 * (bench/streams.mjs, "held in the process").
 */
export const STEP_BOUND = 16 * 1024;

/**
 * An entry's weight, what holding it costs: its free text in bytes as V8 holds it, and a fixed part
 * for the rest (its other fields and the object that holds them).
 */
export const entryWeight = (entry: TimelineEntry) =>
  200 + stringBytes(entry.message ?? "") + stringBytes(entry.status_reason ?? "");

const weightOf = (entries: TimelineEntry[]) => entries.reduce((sum, entry) => sum + entryWeight(entry), 0);

export class PendingEntries {
  private entries: TimelineEntry[] = [];
  /** The weight of the step last taken, which the runtime may still hold. */
  private inFlight = 0;
  /** Their weight in the isolate's budget; dropped (the entries let go) to make room for another stream. */
  private readonly buffer = isolateStreamBuffers.open(() => {
    this.entries = [];
  });

  get length(): number {
    return this.entries.length;
  }

  /** The bytes held. */
  get held(): number {
    return this.buffer.held;
  }

  /** Another stream of the isolate took this one's place in the budget: it is to end. */
  get dropped(): boolean {
    return this.buffer.dropped;
  }

  /**
   * A page read from D1 in place of what is pending (entries the feed pushed while it was read, which
   * it holds again): as many entries as the budget allows, the first always (its client is reading);
   * how many it kept. The others are read again once these are sent.
   */
  fill(page: TimelineEntry[]): number {
    this.buffer.release(weightOf(this.entries));
    let kept = 0;
    for (const entry of page) {
      const weight = entryWeight(entry);
      if (!this.buffer.reserve(weight)) {
        if (kept > 0) break;
        this.buffer.force(weight);
      }
      kept++;
    }
    this.entries = page.slice(0, kept);
    return kept;
  }

  /** An entry pushed by the feed; false when the stream may hold no more (its bound, or its share). */
  push(entry: TimelineEntry): boolean {
    if (!this.buffer.reserve(entryWeight(entry))) return false;
    this.entries.push(entry);
    return true;
  }

  last(): TimelineEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  /** The runtime asks for the next step: the last one was written to the client's connection. */
  sent(): void {
    this.buffer.release(this.inFlight);
    this.inFlight = 0;
  }

  /**
   * The next step's entries (at most FOLLOW_CHUNK, STEP_BOUND but one): they count as sent from
   * here, and stay in the budget until `sent`.
   */
  takeStep(): TimelineEntry[] {
    let weight = 0;
    let n = 0;
    while (n < this.entries.length && n < FOLLOW_CHUNK) {
      const next = entryWeight(this.entries[n] as TimelineEntry);
      if (n > 0 && weight + next > STEP_BOUND) break;
      weight += next;
      n++;
    }
    this.inFlight += weight;
    return this.entries.splice(0, n);
  }

  /** Lets go of everything, and of the budget (the stream ended). */
  close(): void {
    this.entries = [];
    this.inFlight = 0;
    this.buffer.close();
  }
}
