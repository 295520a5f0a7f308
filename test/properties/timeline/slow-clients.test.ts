/**
 * Live streams whose client stops reading (API_CONTRACT §19, §5), through the real Worker, D1 and
 * DeploymentFeed object: what such a stream holds stays bounded, and it still ends on time and
 * when its access ends, without waiting for its client to read; the client then resumes with
 * `Last-Event-ID` and sees every entry exactly once. Reads are paused by holding the response's
 * reader without reading (the stream's `pull` then never runs).
 */
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { STREAM_BUFFER_BOUND as BUFFER_BOUND } from "../../../src/lib/stream-buffers";
import type { TimelineEntry } from "../../../src/schemas/timeline";
import { entryWeight, STEP_BOUND } from "../../../src/services/deployments/follow-pending";
import { request } from "../../helpers/api";
import { recordingD1 } from "../../helpers/d1-trips";
import { deploymentOfStacks, postLogs, reportOk, timelineOf } from "../../helpers/engine";
import { addProjectMember, createApiKey, createCaller } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { type LiveStream, nextEntries, openSockets, openStream, readToEnd } from "../../helpers/sse";
import { sleep, until } from "../../helpers/wait";

/** The Worker with these test settings (src/config.ts), called directly: its stream is the body. */
const withSettings =
  (settings: Record<string, string>, base: Env = env) =>
  async (req: Request) =>
    createApp().fetch(req, { ...base, ...settings }, createExecutionContext());

/**
 * A stream that sent the deployment's first entry, subscribed to its feed, and had one pushed
 * entry (seq 2) read: its client now stops reading, with no read outstanding.
 */
async function pausedStream(
  deploymentId: string,
  path: string,
  key: string,
  fetcher?: (req: Request) => Promise<Response>,
) {
  const stream = await openStream(path, key, {}, fetcher);
  expect(stream.status).toBe(200);
  await nextEntries(stream, 1);
  const next = nextEntries(stream, 1, 10_000);
  await until("subscribed", async () => (await openSockets(deploymentId)) === 1);
  await postLogs(deploymentId, [{ message: "read before the pause" }]);
  expect((await next).map((e) => e.seq)).toEqual([2]);
  return stream;
}

/** Whatever the stream still delivers, up to its close (it must close: `end` is not awaited here). */
async function drain(stream: LiveStream): Promise<TimelineEntry[]> {
  const out: TimelineEntry[] = [];
  for (let event = await stream.next(); event; event = await stream.next()) {
    if (event.event !== "end") out.push(JSON.parse(event.data) as TimelineEntry);
  }
  return out;
}

/** `n` lines of 8,192 characters (the longest a line may be), numbered from `from`. */
const longLines = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({ message: `line ${from + i} `.padEnd(8192, "x") }));

describe("a stream whose client stops reading while the engine writes", () => {
  // The stream's end is logged (info): the test checks the line, kept out of the run's output.
  const info = captureLogs("log");

  it("ends once it holds BUFFER_BOUND, with nothing lost or repeated across the reconnection", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    // Through the runtime, as a real client: its response body is piped to the reader.
    const stream = await pausedStream(deployment.id, path, owner.key);
    // More than the bound while paused: 100 lines of 8 KiB per request (a request's body is ≤ 1 MiB).
    const lines = Math.ceil((1.5 * BUFFER_BOUND) / 8192 / 100) * 100;
    for (let i = 0; i < lines; i += 100) {
      expect((await postLogs(deployment.id, longLines(100, i + 1))).status).toBe(202);
    }
    // Ended without a read: its subscription released.
    await until("the stream ended", async () => (await openSockets(deployment.id)) === 0);
    expect(info.lines()).toContainEqual(
      expect.objectContaining({
        msg: "a live stream's client fell behind; the stream ends",
        deployment_id: deployment.id,
      }),
    );

    // The client reads on: what was queued before the end, then the close.
    const delivered = await drain(stream);
    const deliveredWeight = delivered.reduce((sum, e) => sum + entryWeight(e), 0);
    expect(deliveredWeight).toBeLessThanOrEqual(BUFFER_BOUND);
    expect(delivered.length).toBeLessThan(lines);

    // It reconnects from the last `id` it received, and follows to the end.
    const last = delivered[delivered.length - 1]?.seq ?? 2;
    const again = await openStream(path, owner.key, { "last-event-id": String(last) });
    const done = reportOk(deployment.id, { status: "cancelled" });
    const rest = await readToEnd(again, 10_000);
    expect(rest.end).toEqual(await done);

    const seen = [...delivered, ...rest.entries].map((e) => e.seq);
    const timeline = await timelineOf(owner.key, deployment.id);
    expect(seen).toEqual(timeline.slice(2).map((e) => e.seq));
    expect(timeline.filter((e) => e.type === "log")).toHaveLength(lines + 1);
  });

  it("a stream that holds less goes on: its client reads every entry once it reads again", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    const stream = await pausedStream(deployment.id, path, owner.key);
    for (let i = 0; i < 200; i += 100) await postLogs(deployment.id, longLines(100, i + 1));
    expect(await openSockets(deployment.id)).toBe(1);
    expect((await nextEntries(stream, 200)).map((e) => e.seq)).toEqual(
      Array.from({ length: 200 }, (_, i) => i + 3),
    );
    await stream.cancel();
  });
});

describe("what one step of a stream queues", () => {
  it("at most STEP_BOUND: a page of long lines read from D1 goes to the client in pieces", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    for (let i = 0; i < 300; i += 100) await postLogs(deployment.id, longLines(100, i + 1));
    // Called directly, the Worker's body is the stream itself: one read, one step.
    const res = await withSettings({})(
      new Request(`http://api.test${path}`, {
        headers: { accept: "text/event-stream", "x-api-key": owner.key },
      }),
    );
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const steps: number[] = [];
    while (steps.reduce((a, b) => a + b, 0) < 301) {
      const { value } = await reader.read();
      steps.push(decoder.decode(value).match(/^id: /gm)?.length ?? 0);
    }
    await reader.cancel();
    // 301 entries (the first status, then 300 lines of 8,192 characters), a step at most STEP_BOUND.
    const line = entryWeight(longLines(1, 1)[0] as unknown as TimelineEntry);
    expect(Math.max(...steps)).toBeLessThanOrEqual(1 + Math.floor(STEP_BOUND / line));
    expect(steps.length).toBeGreaterThanOrEqual(Math.ceil((300 * line) / STEP_BOUND));
  });
});

describe("a paused stream still ends on time and when its access ends", () => {
  it("after its time limit, by a timer: the client then reads the limit's comment and the close", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    const stream = await pausedStream(
      deployment.id,
      path,
      owner.key,
      withSettings({ STREAM_MAX_MS_OVERRIDE: "300" }),
    );
    await until("the stream ended", async () => (await openSockets(deployment.id)) === 0, 3000);
    expect(await stream.next()).toBeNull();
    expect(stream.comments.at(-1)).toMatch(/^: the stream has reached its time limit/);
  });

  const checking = withSettings({ STREAM_RECHECK_MS_OVERRIDE: "200" });

  it("once its key is revoked and its deployment changes, within the recheck period, without a read", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    const ci = await createApiKey(owner);
    const stream = await pausedStream(deployment.id, path, ci.key, checking);
    expect((await request("DELETE", `/v1/api-keys/${ci.keyId}`, { key: owner.key })).status).toBe(204);
    const changed = Date.now();
    await postLogs(deployment.id, [{ message: "after the revocation" }]);
    await until("the stream ended", async () => (await openSockets(deployment.id)) === 0, 3000);
    // The recheck period (200 ms) after the last check, which may have been the pause's read.
    expect(Date.now() - changed).toBeLessThan(2000);
    // Nothing after the revocation reached it.
    expect(await stream.next()).toBeNull();
    expect((await openStream(path, ci.key, { "last-event-id": "2" }, checking)).status).toBe(401);
  });

  it("once its account leaves the project and its deployment changes, without a read", async () => {
    const { org, owner, project, deployment, path } = await deploymentOfStacks(1);
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const stream = await pausedStream(deployment.id, path, viewer.key, checking);
    const removed = await request("DELETE", `/v1/projects/${project.id}/members/${viewer.accountId}`, {
      key: owner.key,
    });
    expect(removed.status).toBe(204);
    await postLogs(deployment.id, [{ message: "after the removal" }]);
    await until("the stream ended", async () => (await openSockets(deployment.id)) === 0, 3000);
    expect(await stream.next()).toBeNull();
  });

  it("checks nothing while its deployment does not change: an idle stream costs no D1 query (§19)", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    const trips: string[][] = [];
    const d1 = recordingD1(env, { trip: (trip) => trips.push(trip.sql) });
    const stream = await pausedStream(
      deployment.id,
      path,
      owner.key,
      withSettings({ STREAM_RECHECK_MS_OVERRIDE: "50" }, d1.env),
    );
    // The pushed entry's check (its change), then idle for many recheck periods.
    await sleep(200);
    const settled = trips.length;
    await sleep(600);
    expect(trips.length).toBe(settled);
    expect(await openSockets(deployment.id)).toBe(1);
    await stream.cancel();
  });
});
