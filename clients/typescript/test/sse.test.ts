import { describe, expect, it } from "vitest";
import { readSse, type SseEvent } from "../src/sse.js";

/** A body delivered in the given pieces (strings or raw bytes), as a network might cut it. */
function body(pieces: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const p of pieces) controller.enqueue(typeof p === "string" ? enc.encode(p) : p);
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>, handlers = {}) {
  const events: SseEvent[] = [];
  for await (const e of readSse(stream, handlers)) events.push(e);
  return events;
}

describe("readSse", () => {
  it("reads id, event and data, and keeps the last id for later events", async () => {
    const events = await all(body(['id: 1\nevent: log\ndata: {"a":1}\n\n', "data: plain\n\n"]));
    expect(events).toEqual([
      { id: "1", event: "log", data: '{"a":1}' },
      { id: "1", event: "message", data: "plain" },
    ]);
  });

  it("joins data lines, takes CRLF, LF and CR, and a CRLF cut between two chunks", async () => {
    const events = await all(
      body(["data: a\r\ndata: b\r", "\n\r\ndata: c\rdata: d\r\r", "id:7\n", "data:e\n\n"]),
    );
    expect(events).toEqual([
      { id: "", event: "message", data: "a\nb" },
      { id: "", event: "message", data: "c\nd" },
      { id: "7", event: "message", data: "e" },
    ]);
  });

  it("decodes a character cut between two chunks, and drops a leading BOM", async () => {
    const bytes = new TextEncoder().encode("\uFEFFdata: 🚀é\n\n");
    const events = await all(body([bytes.slice(0, 8), bytes.slice(8, 9), bytes.slice(9)]));
    expect(events).toEqual([{ id: "", event: "message", data: "🚀é" }]);
  });

  it("reports comments and retry, skips unknown fields, and drops an unfinished event", async () => {
    const comments: string[] = [];
    const retries: number[] = [];
    const events = await all(
      body([": keep-alive\n", "retry: 2500\nretry: soon\nfoo: bar\ndata\n\n", "id: 9\ndata: cut off"]),
      { onComment: (t: string) => comments.push(t), onRetry: (ms: number) => retries.push(ms) },
    );
    expect(comments).toEqual([" keep-alive"]);
    expect(retries).toEqual([2500]);
    // `data` with no colon is a data line with an empty value; the last event never ended.
    expect(events).toEqual([{ id: "", event: "message", data: "" }]);
  });

  it("sends no event for a blank line without data, and ignores an id holding NUL", async () => {
    const events = await all(body(["event: end\n\n", "id: 3\nid: x\0y\ndata: z\n\n"]));
    expect(events).toEqual([{ id: "3", event: "message", data: "z" }]);
  });
});
