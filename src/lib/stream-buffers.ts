/**
 * What the live streams of one isolate hold for their clients (API_CONTRACT §19, §33): one budget
 * of bytes, STREAM_BUFFER_BUDGET, shared by every stream the isolate serves, and within it at most
 * STREAM_BUFFER_BOUND per stream. A stream holds what its deployment's feed pushed that its client
 * has not taken yet, and the page it read from D1 for its client; what it sends leaves the budget.
 *
 * Why one budget: a Worker isolate has 128 MB, and a stream whose client stops reading fills its
 * buffer whatever its neighbours do. With a bound per stream alone, 20 paused streams of one key
 * grew the local Worker by 168 MiB (issue #78); the limit per key family (10, §33) does not bound
 * an isolate either, which serves many families. So the isolate's streams together hold at most
 * the budget, and a stream over its share of it is ended: its client resumes with `Last-Event-ID`
 * and loses nothing (src/services/deployments/follow.ts).
 *
 * The rule, on every reservation: a stream may hold more while the budget has room. When it has
 * none, a stream within its share (the budget divided by the streams open) still may: the stream
 * that holds the most beyond its share is dropped to make room, until there is room; a stream
 * beyond its share is refused (and ends). So a stream that keeps within its share is never the one
 * that ends, and one isolate's paused streams can never take more than the budget, however many
 * they are. One exception, which a paused stream never takes: a stream whose client asks for more
 * and holds nothing is given the one entry it sends next (`force`, at most about 16 KiB) even when
 * the budget is full of streams within their shares.
 *
 * Dropping a stream frees what it holds at once, here; it ends itself at its next event, in its own
 * request (a Worker may not touch another request's sockets or streams): its feed's next message,
 * its client's next read, or its heartbeat (src/routes/deployments/getDeploymentTimeline.ts).
 *
 * Bytes are counted as V8 holds a string: one byte a character when all of them are Latin-1, else
 * two (`stringBytes`), and a fixed part per entry for the rest (`entryWeight`,
 * src/services/deployments/follow-pending.ts).
 */

/** The bytes every live stream of one isolate may hold for its clients, together. */
export const STREAM_BUFFER_BUDGET = 16 * 1024 * 1024;
/**
 * The most one stream may hold. A request's log lines (a 1 MiB body) weigh at most about 1.2 MiB,
 * so a stream whose client keeps reading stays below it while its share allows.
 */
export const STREAM_BUFFER_BOUND = 4 * 1024 * 1024;

/** What a string costs held in V8: one byte a character when all are Latin-1, else two. */
export function stringBytes(text: string): number {
  return /[\u0100-\uffff]/.test(text) ? 2 * text.length : text.length;
}

/** One stream's account in its isolate's budget. */
export class StreamBuffer {
  /** The bytes it holds. */
  held = 0;
  /** Dropped to make room for another stream: it holds nothing more and is to end. */
  dropped = false;

  constructor(
    private readonly pool: StreamBuffers,
    /** Called when the buffer is dropped: frees the stream's entries (JavaScript only: no I/O). */
    readonly onDropped: () => void,
  ) {}

  /** Holds `bytes` more when the rule allows it (see the module's header); false: the stream is to end. */
  reserve(bytes: number): boolean {
    return this.pool.reserve(this, bytes);
  }

  /**
   * Holds `bytes` more whatever the rule (room made by the rule first, if it can be): the one entry
   * a reading client is sent next.
   */
  force(bytes: number): void {
    if (!this.pool.reserve(this, bytes)) this.pool.add(this, bytes);
  }

  /** `bytes` left: sent to the client, or let go. */
  release(bytes: number): void {
    this.pool.add(this, -Math.min(bytes, this.held));
  }

  /** Leaves the budget with whatever it holds (the stream ended). */
  close(): void {
    this.pool.remove(this);
  }
}

export type BufferUsage = { budget: number; held: number; streams: number };

/** One isolate's budget: every open stream's buffer. */
export class StreamBuffers {
  private readonly buffers = new Set<StreamBuffer>();
  private total = 0;

  constructor(
    readonly budget: number,
    readonly bound: number,
  ) {}

  /** A new stream's account; `onDropped` as StreamBuffer's. */
  open(onDropped: () => void): StreamBuffer {
    const buffer = new StreamBuffer(this, onDropped);
    this.buffers.add(buffer);
    return buffer;
  }

  /** What each stream may hold when the budget is full: the budget divided by the streams open (`more` besides). */
  share(more = 0): number {
    return this.budget / Math.max(1, this.buffers.size + more);
  }

  usage(): BufferUsage {
    return { budget: this.budget, held: this.total, streams: this.buffers.size };
  }

  reserve(buffer: StreamBuffer, bytes: number): boolean {
    if (!this.buffers.has(buffer)) return false;
    if (buffer.held + bytes > this.bound) return false;
    while (this.total + bytes > this.budget) {
      const share = this.share();
      if (buffer.held + bytes > share) return false;
      let largest: StreamBuffer | undefined;
      for (const other of this.buffers) {
        if (other !== buffer && (!largest || other.held > largest.held)) largest = other;
      }
      // Within its share while the budget is full: another holds more than its share.
      if (!largest || largest.held <= share) return false;
      this.drop(largest);
    }
    this.add(buffer, bytes);
    return true;
  }

  add(buffer: StreamBuffer, bytes: number): void {
    if (!this.buffers.has(buffer)) return;
    buffer.held += bytes;
    this.total += bytes;
  }

  remove(buffer: StreamBuffer): void {
    if (!this.buffers.delete(buffer)) return;
    this.total -= buffer.held;
    buffer.held = 0;
  }

  /** Out of the budget at once, what it held with it; the stream ends at its next event. */
  private drop(buffer: StreamBuffer): void {
    this.buffers.delete(buffer);
    this.total -= buffer.held;
    buffer.held = 0;
    buffer.dropped = true;
    buffer.onDropped();
  }
}

/** The isolate's streams (module state: one per isolate). */
export const isolateStreamBuffers = new StreamBuffers(STREAM_BUFFER_BUDGET, STREAM_BUFFER_BOUND);
