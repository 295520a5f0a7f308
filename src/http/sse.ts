/**
 * Server-Sent Events (WHATWG HTML §9.2): whether a request asks for them, and a response body
 * that writes a source's events as the client takes them, with keep-alive comments while idle
 * and a cap on the stream's life. The source decides what to send; this file only frames it.
 */

export type SseEvent = { id?: string; event: string; data: string };

export type SseSource = {
  /**
   * The next events, as soon as there are some; `[]` when `idleMs` passed without any; `null`
   * when the stream is over (after its last events).
   */
  next(idleMs: number): Promise<SseEvent[] | null>;
  /** Releases what the source holds; called once, when the stream ends either way. */
  close(): void;
  /**
   * Called once as the stream starts, with `end`, which ends the stream at once whether or not
   * its client is reading: what was already queued still reaches the client, then the stream
   * closes. A source that can learn on its own that the stream must stop (it fell too far behind
   * its client, its access ended) calls it, since `next` runs only when the client reads.
   */
  start?(end: () => void): void;
};

export type StreamLimits = {
  /** A comment at least this often while idle, so no proxy takes the stream for dead. */
  keepAliveMs: number;
  /** The stream's life; at the end it closes, and the client reconnects with `Last-Event-ID`. */
  maxMs: number;
};

/** `data` holds no line break: every source sends JSON, which escapes them. */
const frame = ({ id, event, data }: SseEvent) =>
  `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`;

const TIME_LIMIT = ": the stream has reached its time limit; reconnect with Last-Event-ID\n\n";

/**
 * The stream. It asks the source for more only when the client has taken what was sent (one
 * pull at a time), so a slow client holds back the reading rather than filling memory, and a
 * client that goes away cancels it, which closes the source at once. Its time limit is a timer,
 * not a check made when the client reads: a client that stops reading does not keep it open.
 * Every event is enqueued whole, so the last `id` a client received is where it resumes.
 */
export function eventStream(source: SseSource, limits: StreamLimits): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const finish = () => {
    if (closed) return false;
    closed = true;
    clearTimeout(timer);
    source.close();
    return true;
  };
  /** Closes after what is queued (and `comment`); a pull still waiting on the source then sends nothing. */
  const end = (comment?: string) => {
    if (!finish()) return;
    if (comment) controller?.enqueue(encoder.encode(comment));
    controller?.close();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        timer = setTimeout(() => end(TIME_LIMIT), limits.maxMs);
        source.start?.(() => end());
      },
      async pull(c) {
        let events: SseEvent[] | null;
        try {
          events = await source.next(limits.keepAliveMs);
        } catch (err) {
          if (finish()) c.error(err);
          return;
        }
        if (closed) return;
        if (events === null) {
          end();
          return;
        }
        c.enqueue(encoder.encode(events.length ? events.map(frame).join("") : ": keep-alive\n\n"));
      },
      cancel() {
        finish();
      },
    },
    { highWaterMark: 0 },
  );
}

/** The q-value of a media range in an Accept header's entry (`;q=0.5`), 1 when absent. */
function qualityOf(params: string[]): number {
  const q = params.find((p) => /^q=/i.test(p.trim()));
  const value = q === undefined ? 1 : Number(q.trim().slice(2));
  return Number.isFinite(value) ? value : 0;
}

/**
 * Whether `Accept` asks for an event stream rather than JSON: it names `text/event-stream`
 * (with a q above 0) and rates it at least as high as JSON (`application/json`,
 * `application/*` or `*\/*`). `*\/*` alone, or no header, is JSON.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  let stream = 0;
  let json = 0;
  for (const entry of accept.split(",")) {
    const [range = "", ...params] = entry.split(";");
    const type = range.trim().toLowerCase();
    const q = qualityOf(params);
    if (type === "text/event-stream") stream = Math.max(stream, q);
    else if (type === "application/json" || type === "application/*" || type === "*/*")
      json = Math.max(json, q);
  }
  return stream > 0 && stream >= json;
}
