/**
 * One budget of buffered bytes per isolate, shared by every live stream it serves (issue #78,
 * API_CONTRACT §19, §33; src/lib/stream-buffers.ts), through the real Worker, D1 and feed objects:
 * however many streams' clients stop reading, the isolate's streams hold at most the budget; a
 * stream over its share ends (a reading one, within its share, goes on), and every client resumes
 * with `Last-Event-ID`, seeing every entry exactly once. The test and the Worker share the isolate,
 * so the test reads the budget's account directly.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import {
  isolateStreamBuffers,
  STREAM_BUFFER_BOUND,
  STREAM_BUFFER_BUDGET,
  type StreamBuffer,
} from "../../../src/lib/stream-buffers";
import type { TimelineEntry } from "../../../src/schemas/timeline";
import { entryWeight, FOLLOW_PAGE_WEIGHT } from "../../../src/services/deployments/follow-pending";
import { deploymentOfStacks, postLogs, reportOk, timelineOf } from "../../helpers/engine";
import { type Caller, createApiKey } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { type LiveStream, nextEntries, openSockets, openStream, readToEnd } from "../../helpers/sse";
import { until } from "../../helpers/wait";

/** `n` lines of 8,192 characters (the longest a line may be), numbered from `from`. */
const longLines = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({ message: `line ${from + i} `.padEnd(8192, "x") }));

/**
 * `keys.length` streams of the deployment, one a key, each having read the first entry and one
 * pushed entry (seq 2), then left with no read outstanding: paused.
 */
async function pausedStreams(
  deploymentId: string,
  path: string,
  keys: string[],
  fetcher?: (req: Request) => Promise<Response>,
) {
  const streams = await Promise.all(keys.map((key) => openStream(path, key, {}, fetcher)));
  expect(new Set(streams.map((s) => s.status))).toEqual(new Set([200]));
  await Promise.all(streams.map((s) => nextEntries(s, 1)));
  const reads = streams.map((s) => nextEntries(s, 1, 10_000));
  await until("subscribed", async () => (await openSockets(deploymentId)) >= keys.length, 10_000);
  await postLogs(deploymentId, [{ message: "read before the pause" }]);
  for (const read of await Promise.all(reads)) expect(read.map((e) => e.seq)).toEqual([2]);
  return streams;
}

/** What the stream still delivers up to its close (events queued before it ended). */
async function drain(stream: LiveStream): Promise<TimelineEntry[]> {
  const out: TimelineEntry[] = [];
  for (let event = await stream.next(); event; event = await stream.next()) {
    if (event.event !== "end") out.push(JSON.parse(event.data) as TimelineEntry);
  }
  return out;
}

/** A client that reads on from where its stream stopped, to the end: every entry after seq 2. */
async function resume(path: string, key: string, delivered: TimelineEntry[]) {
  const last = delivered[delivered.length - 1]?.seq ?? 2;
  const again = await openStream(path, key, { "last-event-id": String(last) });
  expect(again.status).toBe(200);
  const rest = await readToEnd(again, 10_000);
  expect(rest.end).not.toBeNull();
  return [...delivered, ...rest.entries];
}

const keysOf = async (owner: Caller, families: number, perFamily: number) => {
  const out: string[] = [];
  for (let f = 0; f < families; f++) {
    const key = await createApiKey(owner);
    for (let i = 0; i < perFamily; i++) out.push(key.key);
  }
  return out;
};

describe("the isolate's streams share one budget of buffered bytes", () => {
  // Each stream that ends for it says so (info lines), checked below.
  const logs = captureLogs("log");
  const infos = () => logs.lines().map((line) => line.msg);
  // The runtime is shared by test files: the streams of one that ran before are gone first.
  beforeEach(async () => {
    await until(
      "no stream of an earlier test is open",
      async () => isolateStreamBuffers.usage().streams === 0,
    );
  });

  it("20 streams, 19 paused: together they hold at most the budget, paused ones over their share end, the reader goes on, and nothing is lost or repeated", async () => {
    expect(STREAM_BUFFER_BUDGET).toBeLessThan(20 * STREAM_BUFFER_BOUND);
    const { owner, deployment, path } = await deploymentOfStacks(1);
    const keys = await keysOf(owner, 2, 10);
    const paused = await pausedStreams(deployment.id, path, keys.slice(0, 19));
    const readerKey = keys[19] as string;
    const reader = await openStream(path, readerKey, { "last-event-id": "2" });
    const got: TimelineEntry[] = [];
    const read = (async () => {
      for (let event = await reader.next(20_000); event; event = await reader.next(20_000)) {
        if (event.event === "end") return JSON.parse(event.data) as unknown;
        got.push(JSON.parse(event.data) as TimelineEntry);
      }
      return null;
    })();
    await until("the reader subscribed", async () => (await openSockets(deployment.id)) === 20, 5000);

    // 400 lines (3.3 MiB), 50 a request: less than a stream's own bound (4 MiB),
    // more than its share of the budget while 20 streams share it (0.8 MiB), and each request
    // within the reader's share. The paused ones fill their shares, and those over theirs end,
    // until the ones left hold no more than their shares (the budget divided among fewer).
    // Without the budget each would hold what its pipe did not take: over 40 MiB.
    let most = 0;
    for (let i = 0; i < 400; i += 50) {
      const posted = await postLogs(deployment.id, longLines(50, i + 1));
      expect(posted.status).toBe(202);
      // A client that reads takes each request's lines before the next comes.
      const last = posted.body.last_seq;
      await until("the reader read them", async () => (got.at(-1)?.seq ?? 0) >= last, 5000);
      most = Math.max(most, isolateStreamBuffers.usage().held);
    }
    expect(most).toBeLessThanOrEqual(STREAM_BUFFER_BUDGET);
    const left = await openSockets(deployment.id);
    expect(left).toBeLessThan(20);
    // A stream dropped for another is out of the budget at once, and closes its socket at its next event.
    const { held, streams } = isolateStreamBuffers.usage();
    expect(streams).toBeLessThanOrEqual(left);
    expect(held).toBeLessThanOrEqual(STREAM_BUFFER_BUDGET);
    expect(infos()).toContain("a live stream's client fell behind; the stream ends");

    // The reader, within its share, got everything and goes on to the end.
    const done = reportOk(deployment.id, { status: "cancelled" });
    expect(await read).toEqual(await done);
    const timeline = (await timelineOf(owner.key, deployment.id)).slice(2).map((e) => e.seq);
    expect(got.map((e) => e.seq)).toEqual(timeline);

    // Each paused client reads what was queued before its stream ended (or to `end`, if it lasted),
    // then resumes from there: every entry once.
    for (const [i, stream] of paused.entries()) {
      const seen = await resume(path, keys[i] as string, await drain(stream));
      expect(seen.map((e) => e.seq)).toEqual(timeline);
    }
    expect(isolateStreamBuffers.usage()).toMatchObject({ held: 0, streams: 0 });
  });

  it("a stream that held more than its share while alone is dropped for the others, and ends at its own next beat", async () => {
    const first = await deploymentOfStacks(1);
    // Its heartbeat every 250 ms (a quarter of its lease), so that it ends soon after its drop.
    const fast = async (req: Request) =>
      createApp().fetch(req, { ...env, STREAM_LEASE_MS_OVERRIDE: "1000" } as Env, createExecutionContext());
    const [alone] = await pausedStreams(first.deployment.id, first.path, [first.owner.key], fast);
    // 2.5 MiB of lines, of which it holds more than a MiB (the runtime's pipe to its client takes
    // some): within its own bound and, alone, within its share.
    for (let i = 0; i < 300; i += 50) await postLogs(first.deployment.id, longLines(50, i + 1));
    await until("it holds them", async () => isolateStreamBuffers.usage().held > 1024 * 1024);
    expect(await openSockets(first.deployment.id)).toBe(1);

    // 19 paused streams of another deployment fill their shares: the lone stream, far beyond its
    // share now, is dropped for them, and ends without a read.
    const second = await deploymentOfStacks(1);
    const keys = await keysOf(second.owner, 2, 10);
    const others = await pausedStreams(second.deployment.id, second.path, keys.slice(0, 19));
    for (let i = 0; i < 400; i += 50) {
      await postLogs(second.deployment.id, longLines(50, i + 1));
      expect(isolateStreamBuffers.usage().held).toBeLessThanOrEqual(STREAM_BUFFER_BUDGET);
    }
    await until("the lone stream ended", async () => (await openSockets(first.deployment.id)) === 0, 3000);
    expect(infos()).toContain(
      "a live stream was over its share of the isolate's buffer budget; the stream ends",
    );

    // Its client loses nothing: what was queued, then the rest from where it stopped.
    const done = reportOk(first.deployment.id, { status: "cancelled" });
    const seen = await resume(first.path, first.owner.key, await drain(alone as LiveStream));
    await done;
    const timeline = (await timelineOf(first.owner.key, first.deployment.id)).slice(2).map((e) => e.seq);
    expect(seen.map((e) => e.seq)).toEqual(timeline);
    await Promise.all(others.map((s) => s.cancel()));
    await until("every stream closed", async () => isolateStreamBuffers.usage().streams === 0, 3000);
  });

  it("a page read from D1 while the budget is full takes only the stream's share; the rest is read as its client takes it", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    // 400 lines (3.3 MiB) in D1, then the end: the stream's first read finds them all (one page).
    for (let i = 0; i < 400; i += 50)
      expect((await postLogs(deployment.id, longLines(50, i + 1))).status).toBe(202);
    await reportOk(deployment.id, { status: "cancelled" });
    // 15 other streams of the isolate, each within its share, hold 15 MiB (the test shares the
    // isolate's budget): a 16th stream's share, and the room left, is 1 MiB.
    const MiB = 1024 * 1024;
    const others: StreamBuffer[] = Array.from({ length: 15 }, () =>
      isolateStreamBuffers.open(() => undefined),
    );
    for (const other of others) expect(other.reserve(MiB)).toBe(true);
    try {
      const stream = await openStream(path, owner.key);
      const got: TimelineEntry[] = [];
      let most = 0;
      for (let event = await stream.next(10_000); event; event = await stream.next(10_000)) {
        most = Math.max(most, isolateStreamBuffers.usage().held);
        if (event.event !== "end") got.push(JSON.parse(event.data) as TimelineEntry);
      }
      // Without the budget, its page alone would have held 3.3 MiB beside the others' 15.
      expect(most).toBeLessThanOrEqual(STREAM_BUFFER_BUDGET);
      expect(others.some((other) => other.dropped)).toBe(false);
      const timeline = (await timelineOf(owner.key, deployment.id)).map((e) => e.seq);
      expect(got.map((e) => e.seq)).toEqual(timeline);
    } finally {
      for (const other of others) other.close();
    }
  });

  it("a D1 read brings at most a page's weight into the isolate, whatever room the stream has; the client still gets every entry once", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    // 400 lines (3.3 MiB) in D1, then the end: nothing is pushed to the stream, it reads them all.
    // Each begins with a NUL character, where SQLite's `length` of a text stops: weighed as bytes.
    const nul = (lines: { message: string }[]) =>
      lines.map(({ message }) => ({ message: `\0${message}`.slice(0, 8192) }));
    for (let i = 0; i < 400; i += 50)
      expect((await postLogs(deployment.id, nul(longLines(50, i + 1)))).status).toBe(202);
    await reportOk(deployment.id, { status: "cancelled" });
    const line = entryWeight({ message: "x".repeat(8192) } as TimelineEntry);
    expect(FOLLOW_PAGE_WEIGHT + line).toBeLessThan(STREAM_BUFFER_BOUND);

    // Alone, its room is its whole bound (4 MiB): a read of 500 rows would hold all 3.3 MiB.
    const stream = await openStream(path, owner.key);
    expect(stream.status).toBe(200);
    const opened = isolateStreamBuffers.usage().held;
    expect(opened).toBeGreaterThan(0);
    expect(opened).toBeLessThanOrEqual(FOLLOW_PAGE_WEIGHT + line);
    const got: TimelineEntry[] = [];
    let most = opened;
    for (let event = await stream.next(10_000); event; event = await stream.next(10_000)) {
      most = Math.max(most, isolateStreamBuffers.usage().held);
      if (event.event !== "end") got.push(JSON.parse(event.data) as TimelineEntry);
    }
    expect(most).toBeLessThanOrEqual(FOLLOW_PAGE_WEIGHT + line);
    const timeline = (await timelineOf(owner.key, deployment.id)).map((e) => e.seq);
    expect(timeline.length).toBeGreaterThan(400);
    expect(got.map((e) => e.seq)).toEqual(timeline);
  });

  it("a read is no larger than the stream's share of the budget, so a reading stream is not the one others drop", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    for (let i = 0; i < 200; i += 50)
      expect((await postLogs(deployment.id, longLines(50, i + 1))).status).toBe(202);
    await reportOk(deployment.id, { status: "cancelled" });
    const line = entryWeight({ message: "x".repeat(8192) } as TimelineEntry);
    // 63 other streams of the isolate, holding nothing: the budget has all its room, and a 64th
    // stream's share is 256 KiB, half a page.
    const others: StreamBuffer[] = Array.from({ length: 63 }, () =>
      isolateStreamBuffers.open(() => undefined),
    );
    const share = STREAM_BUFFER_BUDGET / 64;
    expect(share).toBeLessThan(FOLLOW_PAGE_WEIGHT);
    try {
      const stream = await openStream(path, owner.key);
      expect(stream.status).toBe(200);
      // A whole page (512 KiB) would be kept: the budget has room, and the stream's bound is 4 MiB.
      const opened = isolateStreamBuffers.usage().held;
      expect(opened).toBeGreaterThan(0);
      expect(opened).toBeLessThanOrEqual(share + line);
      const { entries, end } = await readToEnd(stream, 10_000);
      expect(end).not.toBeNull();
      const timeline = (await timelineOf(owner.key, deployment.id)).map((e) => e.seq);
      expect(entries.map((e) => e.seq)).toEqual(timeline);
    } finally {
      for (const other of others) other.close();
    }
  });
});
