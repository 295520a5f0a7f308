/**
 * The pure pieces of following a deployment (API_CONTRACT §19): Server-Sent Event framing, keep-
 * alives and the life cap (src/http/sse.ts), content negotiation, the feed's messages
 * (src/feed/protocol.ts), the timeline's cursor, and the waiter's alarm clock.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeSeqCursor, encodeCursor, encodeSeqCursor } from "../../src/db/pagination";
import { ApiError } from "../../src/errors";
import { type FeedMessage, feedMessages, MESSAGE_BUDGET, passableRecord } from "../../src/feed/protocol";
import { acceptsEventStream, eventStream, type SseEvent, type SseSource } from "../../src/http/sse";
import { Wakeup } from "../../src/lib/wakeup";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import type { TimelineEntry } from "../../src/schemas/timeline";
import { sleep } from "../helpers/wait";

/** A source that answers `script` in turn, then waits out every idle time; records `close`. */
function scripted(script: Array<SseEvent[] | null>) {
  let closed = 0;
  const source: SseSource = {
    async next(idleMs) {
      if (script.length) return script.shift() as SseEvent[] | null;
      await sleep(idleMs);
      return [];
    },
    close: () => {
      closed++;
    },
  };
  return { source, closed: () => closed };
}

async function readAll(stream: ReadableStream<Uint8Array>, max = 50): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (let i = 0; i < max; i++) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  return text;
}

describe("eventStream", () => {
  it("frames events (`id` only when given), closes when the source is done, and closes the source once", async () => {
    const { source, closed } = scripted([
      [{ id: "1", event: "status", data: '{"seq":1}' }],
      [
        { id: "2", event: "log", data: '{"seq":2}' },
        { event: "end", data: "{}" },
      ],
      null,
    ]);
    const text = await readAll(eventStream(source, { keepAliveMs: 1000, maxMs: 60_000 }));
    expect(text).toBe(
      'id: 1\nevent: status\ndata: {"seq":1}\n\nid: 2\nevent: log\ndata: {"seq":2}\n\nevent: end\ndata: {}\n\n',
    );
    expect(closed()).toBe(1);
  });

  it("sends a comment each time the source has been idle for the keep-alive time", async () => {
    const { source } = scripted([]);
    const reader = eventStream(source, { keepAliveMs: 20, maxMs: 60_000 }).getReader();
    const first = await reader.read();
    const second = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(": keep-alive\n\n");
    expect(new TextDecoder().decode(second.value)).toBe(": keep-alive\n\n");
    await reader.cancel();
  });

  it("ends after its life with a comment saying to reconnect, and closes the source", async () => {
    const { source, closed } = scripted([]);
    const text = await readAll(eventStream(source, { keepAliveMs: 30, maxMs: 100 }));
    expect(text).toMatch(
      /^(: keep-alive\n\n)+: the stream has reached its time limit; reconnect with Last-Event-ID\n\n$/,
    );
    expect(closed()).toBe(1);
  });

  it("ends after its life by a timer, while its client is not reading: what was queued, the comment, the close", async () => {
    const { source, closed } = scripted([[{ id: "1", event: "log", data: "{}" }]]);
    const reader = eventStream(source, { keepAliveMs: 60_000, maxMs: 50 }).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("id: 1\nevent: log\ndata: {}\n\n");
    // No read outstanding: no pull runs, only the timer can end it.
    await sleep(100);
    expect(closed()).toBe(1);
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(
      /^: the stream has reached its time limit/,
    );
    expect((await reader.read()).done).toBe(true);
  });

  it("a source ends it at once through `start`'s `end`, with nothing read meanwhile; a later end is a no-op", async () => {
    let end = () => {};
    const { source, closed } = scripted([]);
    const stream = eventStream(
      {
        ...source,
        start: (e) => {
          end = e;
        },
      },
      { keepAliveMs: 60_000, maxMs: 60_000 },
    );
    end();
    end();
    expect(closed()).toBe(1);
    expect((await stream.getReader().read()).done).toBe(true);
  });

  it("a client that goes away closes the source at once, mid-wait", async () => {
    const { source, closed } = scripted([]);
    const reader = eventStream(source, { keepAliveMs: 60_000, maxMs: 60_000 }).getReader();
    const pending = reader.read();
    await sleep(10);
    await reader.cancel();
    expect(closed()).toBe(1);
    expect((await pending).done).toBe(true);
  });
});

describe("acceptsEventStream", () => {
  it.each([
    ["text/event-stream", true],
    ["TEXT/Event-Stream", true],
    ["text/event-stream, */*;q=0.1", true],
    ["application/json;q=0.5, text/event-stream", true],
    ["text/event-stream;q=0.5, application/json", false],
    ["text/event-stream;q=0", false],
    ["*/*", false],
    ["application/json", false],
    ["", false],
    [undefined, false],
  ])("%s → %s", (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });
});

const entry = (seq: number, message: string | null = "line"): TimelineEntry => ({
  seq,
  type: message === null ? "status" : "log",
  created_at: "2026-11-22T10:04:05.123Z",
  stack_id: null,
  status: message === null ? "in_progress" : null,
  status_reason: null,
  stream: message === null ? null : "stdout",
  message,
});

describe("feedMessages", () => {
  it("one message for a small update, with the feed's last seq, the status and the record", () => {
    const record = { id: "d", status: "failed", updated_at: "2026-11-22T10:04:05.124Z" } as DeploymentRecord;
    const [only, ...rest] = feedMessages(
      {
        entries: [entry(4, null), entry(5)],
        status: "failed",
        updatedAt: record.updated_at,
        deployment: record,
        bookmark: "b",
      },
      5,
    );
    expect(rest).toEqual([]);
    expect(JSON.parse(only as string)).toEqual({
      last_seq: 5,
      entries: [entry(4, null), entry(5)],
      status: "failed",
      updated_at: record.updated_at,
      deployment: record,
      bookmark: "b",
    });
  });

  it("splits a large update into messages that each fit, in order, the status on the last", () => {
    let split = 0;
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 8192, unit: "binary", size: "large" }), {
          minLength: 1,
          maxLength: 120,
          size: "large",
        }),
        (lines) => {
          const entries = lines.map((line, i) => entry(10 + i, line));
          const messages = feedMessages(
            { entries, status: "in_progress", updatedAt: "t" },
            9 + lines.length,
          ).map((m) => JSON.parse(m) as FeedMessage);
          for (const text of feedMessages({ entries }, 9 + lines.length)) {
            expect(new TextEncoder().encode(text).length).toBeLessThan(1024 * 1024);
          }
          expect(messages.flatMap((m) => m.entries ?? [])).toEqual(entries);
          expect(messages.filter((m) => m.status)).toEqual([messages[messages.length - 1]]);
          expect(messages[messages.length - 1]?.last_seq).toBe(9 + lines.length);
          if (messages.length > 1) split++;
        },
      ),
      { numRuns: 30 },
    );
    // Updates large enough to be split were among them (the rule above is a split's).
    expect(split).toBeGreaterThan(0);
  });

  it("an entry too large for any message is not sent, nor are the rest of its update: `last_seq` announces them", () => {
    const huge = { ...entry(3, null), status_reason: "x".repeat(MESSAGE_BUDGET) };
    const messages = feedMessages({ entries: [entry(2), huge], status: "succeeded", updatedAt: "t" }, 3).map(
      (m) => JSON.parse(m) as FeedMessage,
    );
    expect(messages).toEqual([{ last_seq: 3, status: "succeeded", updated_at: "t" }]);
  });

  it("a record too large to pass along is left to D1", () => {
    const small = { id: "d" } as DeploymentRecord;
    expect(passableRecord(small)).toBe(small);
    expect(
      passableRecord({
        id: "d",
        data: { patch: [{ value: "x".repeat(MESSAGE_BUDGET) }] },
      } as unknown as DeploymentRecord),
    ).toBeUndefined();
    expect(passableRecord(undefined)).toBeUndefined();
  });
});

describe("the timeline's cursor", () => {
  it("round-trips any position", () => {
    fc.assert(
      fc.property(fc.nat(), (seq) => {
        expect(decodeSeqCursor(encodeSeqCursor("timeline", seq), "timeline")).toBe(seq);
      }),
    );
  });

  it("refuses another list's cursor, another order's, and anything that is not one", () => {
    const refused = [
      encodeSeqCursor("other", 3),
      encodeCursor("asc", "", "2026-11-22T10:04:05.123Z", "7Hq3VnT5m2WcXbQ9pLk4Rz"),
      btoa(JSON.stringify({ v: 1, o: "desc", f: "timeline", s: 3 })),
      btoa(JSON.stringify({ v: 1, o: "asc", f: "timeline", s: -1 })),
      btoa(JSON.stringify({ v: 1, o: "asc", f: "timeline", s: 1.5 })),
      "not base64!",
      btoa("null"),
    ];
    for (const raw of refused) {
      expect(() => decodeSeqCursor(raw, "timeline"), raw).toThrow(ApiError);
    }
  });
});

describe("Wakeup", () => {
  it("a ring wakes the waiter at once; a ring before the wait is kept for it; silence times out", async () => {
    const clock = new Wakeup();
    const waiting = clock.wait(5000);
    clock.ring();
    expect(await waiting).toBe(true);
    clock.ring();
    expect(await clock.wait(5000)).toBe(true);
    const started = Date.now();
    expect(await clock.wait(30)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});
