/**
 * A Server-Sent Events reader (the WHATWG "event stream interpretation"): lines end in CRLF, LF
 * or CR; `data:` lines of one event are joined by newlines; `id:` sets the last event ID, which
 * later events keep until another `id:`; a line starting with `:` is a comment (a keep-alive);
 * `retry:` is the reconnection delay the server asks for; an event is dispatched at a blank line,
 * and one left unfinished when the stream ends is dropped.
 */

export type SseEvent = {
  /** `event:`, or `message` when the event named none. */
  event: string;
  data: string;
  /** The last event ID as of this event (`""` before any `id:`). */
  id: string;
};

export type SseHandlers = {
  /** A comment line (without its `:`): servers send them to keep an idle stream open. */
  onComment?: (text: string) => void;
  /** A `retry:` field, in ms. */
  onRetry?: (ms: number) => void;
};

/** The events of `body`, in order, as they arrive. */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  handlers: SseHandlers = {},
  lastEventId = "",
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let first = true;
  let data: string[] = [];
  let event = "";
  let id = lastEventId;
  // A CR that ended the previous chunk may be the first half of a CRLF.
  let skipLf = false;

  const line = (text: string): SseEvent | null => {
    if (text === "") {
      const out = data.length > 0 ? { event: event || "message", data: data.join("\n"), id } : null;
      data = [];
      event = "";
      return out;
    }
    if (text.startsWith(":")) {
      handlers.onComment?.(text.slice(1));
      return null;
    }
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && !value.includes("\0")) id = value;
    else if (field === "retry" && /^\d+$/.test(value)) handlers.onRetry?.(Number(value));
    return null;
  };

  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (first && buffer.length > 0) {
        if (buffer.startsWith("\uFEFF")) buffer = buffer.slice(1);
        first = false;
      }
      if (skipLf && buffer.startsWith("\n")) buffer = buffer.slice(1);
      skipLf = false;
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer[i];
        if (c !== "\n" && c !== "\r") continue;
        const out = line(buffer.slice(start, i));
        if (c === "\r") {
          if (i + 1 < buffer.length) {
            if (buffer[i + 1] === "\n") i++;
          } else skipLf = true;
        }
        start = i + 1;
        if (out) yield out;
      }
      buffer = buffer.slice(start);
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
