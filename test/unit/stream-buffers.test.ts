/**
 * One budget of buffered bytes per isolate, shared by its live streams (src/lib/stream-buffers.ts,
 * API_CONTRACT §19, §33, issue #78): the rule on small numbers, and, for any sequence of streams
 * opening, holding, sending and closing, that the budget holds at every step and that the stream
 * refused or dropped is always one beyond its share.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  isolateStreamBuffers,
  STREAM_BUFFER_BOUND,
  STREAM_BUFFER_BUDGET,
  type StreamBuffer,
  StreamBuffers,
  stringBytes,
} from "../../src/lib/stream-buffers";
import type { TimelineEntry } from "../../src/schemas/timeline";
import { entryWeight, PendingEntries, STEP_BOUND } from "../../src/services/deployments/follow-pending";
import { until } from "../helpers/wait";

describe("one isolate's budget of stream buffers", () => {
  it("states its numbers: 16 MiB for the isolate, 4 MiB a stream", () => {
    expect([STREAM_BUFFER_BUDGET, STREAM_BUFFER_BOUND]).toEqual([16 * 1024 * 1024, 4 * 1024 * 1024]);
  });

  it("counts a string as V8 holds it: a byte a Latin-1 character, else two", () => {
    expect(stringBytes("plain ascii")).toBe(11);
    expect(stringBytes("café ÿ")).toBe(6);
    expect(stringBytes("日本")).toBe(4);
    expect(stringBytes("a🚀")).toBe(6);
  });

  it("lets a stream hold up to its own bound while the budget has room", () => {
    const pool = new StreamBuffers(100, 40);
    const a = pool.open(() => undefined);
    expect(a.reserve(40)).toBe(true);
    expect(a.reserve(1)).toBe(false);
    a.release(10);
    expect(a.reserve(10)).toBe(true);
    expect(pool.usage()).toEqual({ budget: 100, held: 40, streams: 1 });
  });

  it("with the budget full, refuses a stream beyond its share and drops the largest beyond it for one within", () => {
    const pool = new StreamBuffers(100, 100);
    const dropped: string[] = [];
    const hog = pool.open(() => dropped.push("hog"));
    const mid = pool.open(() => dropped.push("mid"));
    expect(hog.reserve(70)).toBe(true);
    expect(mid.reserve(30)).toBe(true);
    // Full. Three streams: a share is 33. The hog is beyond it: refused.
    const small = pool.open(() => dropped.push("small"));
    expect(hog.reserve(1)).toBe(false);
    // The new one is within its share: the largest beyond its share (the hog) is dropped.
    expect(small.reserve(20)).toBe(true);
    expect(dropped).toEqual(["hog"]);
    expect([hog.dropped, hog.held, mid.dropped]).toEqual([true, 0, false]);
    expect(pool.usage()).toEqual({ budget: 100, held: 50, streams: 2 });
    // A dropped stream holds nothing more, and its close changes nothing.
    expect(hog.reserve(1)).toBe(false);
    hog.force(5);
    hog.close();
    expect(pool.usage().held).toBe(50);
  });

  it("gives a stream's bytes back when it sends them and when it closes", () => {
    const pool = new StreamBuffers(100, 100);
    const a = pool.open(() => undefined);
    const b = pool.open(() => undefined);
    a.reserve(60);
    b.reserve(30);
    a.release(20);
    expect(pool.usage().held).toBe(70);
    a.close();
    expect(pool.usage()).toEqual({ budget: 100, held: 30, streams: 1 });
  });

  it("holds the budget at every step of any sequence, and drops or refuses only beyond a share", () => {
    const budget = 1000;
    const step = fc.oneof(
      fc.record({ op: fc.constant("open" as const) }),
      fc.record({
        op: fc.constant("reserve" as const),
        who: fc.nat(),
        bytes: fc.integer({ min: 1, max: 400 }),
      }),
      fc.record({
        op: fc.constant("release" as const),
        who: fc.nat(),
        bytes: fc.integer({ min: 1, max: 400 }),
      }),
      fc.record({ op: fc.constant("close" as const), who: fc.nat() }),
    );
    let drops = 0;
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200, size: "max" }), (steps) => {
        const pool = new StreamBuffers(budget, 600);
        const open: StreamBuffer[] = [];
        for (const s of steps) {
          if (s.op === "open") {
            const buffer: StreamBuffer = pool.open(() => {
              // Told once, after it let go of everything.
              expect([buffer.dropped, buffer.held]).toEqual([true, 0]);
            });
            open.push(buffer);
            continue;
          }
          const live = open.filter((b) => !b.dropped);
          const buffer = live[s.who % Math.max(1, live.length)];
          if (!buffer) continue;
          if (s.op === "reserve") {
            const share = budget / live.length;
            const heldBefore = buffer.held;
            const othersBefore = new Map(live.map((b) => [b, b.held]));
            const fits = pool.usage().held + s.bytes <= budget;
            const taken = buffer.reserve(s.bytes);
            // A stream within its share and its bound is never refused.
            if (heldBefore + s.bytes <= Math.min(share, 600)) expect(taken).toBe(true);
            if (taken && !fits) expect(heldBefore + s.bytes).toBeLessThanOrEqual(share);
            // Dropped only while beyond its share (the share before the first drop is the least of
            // them): never the stream that asked, never one within its share.
            for (const [other, held] of othersBefore) {
              if (!other.dropped) continue;
              drops++;
              expect(other).not.toBe(buffer);
              expect(held).toBeGreaterThan(share);
            }
          } else if (s.op === "release") {
            buffer.release(s.bytes);
          } else {
            buffer.close();
            open.splice(open.indexOf(buffer), 1);
          }
          const usage = pool.usage();
          expect(usage.held).toBeLessThanOrEqual(budget);
          expect(usage.held).toBe(open.filter((b) => !b.dropped).reduce((sum, b) => sum + b.held, 0));
        }
      }),
      { numRuns: 500 },
    );
    // The sequences reached the drops whose rule the loop checks.
    expect(drops).toBeGreaterThan(0);
  });
});

/** A log entry of `chars` characters (8,192: the longest a line may be). */
const entry = (seq: number, chars = 8192): TimelineEntry => ({
  seq,
  type: "log",
  created_at: "2026-01-01T00:00:00.000Z",
  stack_id: null,
  status: null,
  status_reason: null,
  stream: "stdout",
  message: "x".repeat(chars),
});
const pageOf = (n: number, from = 1) => Array.from({ length: n }, (_, i) => entry(from + i));
const weightOf = (entries: TimelineEntry[]) => entries.reduce((sum, e) => sum + entryWeight(e), 0);
const MiB = 1024 * 1024;

describe("a stream's pending entries, in the isolate's budget (follow-pending.ts)", () => {
  // The runtime is shared by test files: the streams of one that ran before are gone first.
  const neighbours: StreamBuffer[] = [];
  beforeEach(async () => {
    await until(
      "no stream of an earlier file holds bytes",
      async () => isolateStreamBuffers.usage().streams === 0,
    );
  });
  afterEach(() => {
    for (const n of neighbours.splice(0)) n.close();
  });
  /** `n` other streams of the isolate, each holding `bytes`. */
  const holding = (n: number, bytes: number) => {
    for (let i = 0; i < n; i++) {
      const other = isolateStreamBuffers.open(() => undefined);
      expect(other.reserve(bytes)).toBe(true);
      neighbours.push(other);
    }
  };

  it("counts a step handed to the runtime until the runtime asks for the next one", () => {
    const pending = new PendingEntries();
    const page = pageOf(20);
    expect(pending.fill(page)).toBe(20);
    expect(pending.held).toBe(weightOf(page));
    const step = pending.takeStep();
    expect(step.length).toBe(Math.floor(STEP_BOUND / entryWeight(entry(1))));
    expect(step[0]?.seq).toBe(1);
    // Written to the client's connection or not, the runtime holds it: still counted.
    expect(pending.held).toBe(weightOf(page));
    pending.sent();
    expect(pending.held).toBe(weightOf(page.slice(step.length)));
    pending.close();
    expect(isolateStreamBuffers.usage()).toMatchObject({ held: 0, streams: 0 });
  });

  it("keeps of a page read from D1 only what its share of a full budget allows (the first entry always)", () => {
    // 15 streams within their shares hold 15 MiB: a 16th's share, and the room left, is 1 MiB.
    holding(15, MiB);
    const pending = new PendingEntries();
    const kept = pending.fill(pageOf(400));
    expect(kept).toBe(Math.floor(MiB / entryWeight(entry(1))));
    expect(isolateStreamBuffers.usage()).toMatchObject({ held: 15 * MiB + pending.held, streams: 16 });
    expect(isolateStreamBuffers.usage().held).toBeLessThanOrEqual(STREAM_BUFFER_BUDGET);
    expect(neighbours.some((n) => n.dropped)).toBe(false);
    pending.close();
  });

  it("keeps the first entry of a page even when its share is smaller than that entry", () => {
    // 2,048 streams share 16 MiB: 8 KiB each, less than one long line. 2,047 hold their shares.
    holding(2047, STREAM_BUFFER_BUDGET / 2048);
    const pending = new PendingEntries();
    expect(pending.fill(pageOf(10))).toBe(1);
    expect(pending.held).toBe(entryWeight(entry(1)));
    expect(neighbours.some((n) => n.dropped)).toBe(false);
    pending.close();
  });

  it("lets go of what the feed pushed while a page was read, which the page holds again", () => {
    const pending = new PendingEntries();
    expect(pending.push(entry(1))).toBe(true);
    expect(pending.push(entry(2))).toBe(true);
    pending.fill(pageOf(3));
    expect(pending.held).toBe(weightOf(pageOf(3)));
    expect(isolateStreamBuffers.usage().held).toBe(pending.held);
    pending.close();
  });

  it("refuses a pushed entry past the stream's bound; dropped for another stream, lets go of its entries", () => {
    const pending = new PendingEntries();
    const fit = Math.floor(STREAM_BUFFER_BOUND / entryWeight(entry(1)));
    for (let seq = 1; seq <= fit; seq++) expect(pending.push(entry(seq))).toBe(true);
    expect(pending.push(entry(fit + 1))).toBe(false);
    // 12 MiB more fill the budget; a stream within its share makes room: the largest beyond its
    // share (this one, 4 MiB, while a share is 16 ÷ 14 MiB) is dropped, its entries let go.
    holding(12, MiB - 1024);
    const newcomer = isolateStreamBuffers.open(() => undefined);
    neighbours.push(newcomer);
    expect(newcomer.reserve(MiB)).toBe(true);
    expect([pending.dropped, pending.held, pending.length]).toEqual([true, 0, 0]);
    expect(pending.push(entry(1))).toBe(false);
    pending.close();
  });
});
