/**
 * Live streams per key family (API_CONTRACT §33, §19, §28), through the real Worker and the
 * family's real limiter object: at most 10 open at once, decided in that object in one step (races
 * fired, not reasoned about); another is `429 rate` with `Retry-After`, not counted against the
 * window (§7); a stream frees its place when it ends, at once when its client goes away, and
 * otherwise when its lease lapses (a place whose stream's isolate died: within 20 s), while a
 * stream that lasts keeps its place by renewing it.
 */
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { LIVE_STREAMS_PER_FAMILY, STREAM_LEASE_MS } from "../../../src/config";
import type { RateLimiter } from "../../../src/rate-limit/limiter";
import { limiterOf, request } from "../../helpers/api";
import { deploymentOfStacks, reportOk } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createApiKey, deriveKey } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { type LiveStream, nextEntries, openSockets, openStream, readToEnd } from "../../helpers/sse";
import { sleep, until } from "../../helpers/wait";

/** The Worker with these settings (src/config.ts) and bindings, called directly. */
const withSettings =
  (settings: Record<string, unknown>) =>
  async (req: Request): Promise<Response> =>
    createApp().fetch(req, { ...env, ...settings } as Env, createExecutionContext());

const placesOf = (rootKeyId: string) =>
  runInDurableObject(limiterOf(`key:${rootKeyId}`), (o: RateLimiter) => o.streamLeases());
const windowOf = (rootKeyId: string) =>
  runInDurableObject(limiterOf(`key:${rootKeyId}`), (o: RateLimiter) => o.usage().default ?? 0);

const statuses = (streams: LiveStream[]) => streams.map((s) => s.status).sort();
const cancelAll = (streams: LiveStream[]) => Promise.all(streams.map((s) => s.cancel()));

/** A refused stream: `429 rate`, `Retry-After` whole seconds within a lease. */
function expectNoPlace(stream: LiveStream) {
  expect(stream.status).toBe(429);
  expect((stream.error as ErrorBody).code).toBe("rate");
  expect((stream.error as ErrorBody).message).toMatch(/10 live streams/);
  const retryAfter = Number(stream.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(STREAM_LEASE_MS / 1000);
}

describe("at most 10 live streams open at once per key family (§33)", () => {
  it("of 15 opened at once by one family's keys, exactly 10 are admitted; the others are 429 rate with Retry-After, not counted", async () => {
    const { owner, path } = await deploymentOfStacks(1);
    const root = await createApiKey(owner);
    // A key made from the root, and one made from that: the same family, the same places (§28).
    const child = await deriveKey(root);
    const grandchild = await deriveKey(child);
    const keys = [root, child, grandchild];
    const countedBefore = await windowOf(root.keyId);
    const streams = await Promise.all(
      Array.from({ length: 15 }, (_, i) => openStream(path, (keys[i % 3] as typeof root).key)),
    );
    expect(statuses(streams)).toEqual([...Array(10).fill(200), ...Array(5).fill(429)]);
    for (const refused of streams.filter((s) => s.status === 429)) expectNoPlace(refused);
    expect(await placesOf(root.keyId)).toBe(LIVE_STREAMS_PER_FAMILY);
    // Each admitted stream counts one request (§19); the refused ones count none (§7).
    expect((await windowOf(root.keyId)) - countedBefore).toBe(10);
    await cancelAll(streams);
  });

  it("another family has places of its own; JSON pages of the timeline take none", async () => {
    const { owner, path } = await deploymentOfStacks(1);
    const [first, second] = [await createApiKey(owner), await createApiKey(owner)];
    const held = await Promise.all(Array.from({ length: 10 }, () => openStream(path, first.key)));
    expect(statuses(held)).toEqual(Array(10).fill(200));
    expectNoPlace(await openStream(path, first.key));
    const others = await Promise.all(Array.from({ length: 10 }, () => openStream(path, second.key)));
    expect(statuses(others)).toEqual(Array(10).fill(200));
    const page = await request<{ data: unknown[] }>("GET", path, { key: first.key });
    expect([page.status, page.body.data.length]).toEqual([200, 1]);
    await cancelAll([...held, ...others]);
  });

  it("a HEAD asking for the stream answers its headers and keeps no place: its dropped body is cancelled at once", async () => {
    const { owner, path } = await deploymentOfStacks(1);
    const key = await createApiKey(owner);
    for (let i = 0; i < LIVE_STREAMS_PER_FAMILY; i++) {
      const head = await request("HEAD", path, { key: key.key, headers: { accept: "text/event-stream" } });
      expect([head.status, head.headers.get("content-type"), head.raw]).toEqual([
        200,
        "text/event-stream",
        "",
      ]);
    }
    // Well within a lease (20 s): a place left to lapse would still be held.
    await until("the HEADs hold no place", async () => (await placesOf(key.keyId)) === 0);
    const streams = await Promise.all(
      Array.from({ length: LIVE_STREAMS_PER_FAMILY }, () => openStream(path, key.key)),
    );
    expect(statuses(streams)).toEqual(Array(LIVE_STREAMS_PER_FAMILY).fill(200));
    await cancelAll(streams);
  });

  it("a stream frees its place when it ends: its client going away, or its deployment's end", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    const key = await createApiKey(owner);
    const held = await Promise.all(Array.from({ length: 10 }, () => openStream(path, key.key)));
    expect(statuses(held)).toEqual(Array(10).fill(200));
    expectNoPlace(await openStream(path, key.key));
    // The client goes away: its place is free at once (no lease to wait for).
    await (held[0] as LiveStream).cancel();
    await until("the place given back", async () => (await placesOf(key.keyId)) === 9, 2000);
    const next = await openStream(path, key.key);
    expect(next.status).toBe(200);
    // The deployment ends: every stream sends `end` to its client and closes, and gives its place back.
    const done = await reportOk(deployment.id, { status: "cancelled" });
    for (const stream of [...held.slice(1), next]) expect((await readToEnd(stream)).end).toEqual(done);
    await until("every place given back", async () => (await placesOf(key.keyId)) === 0, 2000);
  });

  it("a request that never becomes a stream (404, 400) takes no place", async () => {
    const { owner, path } = await deploymentOfStacks(1);
    const key = await createApiKey(owner);
    const missing = await Promise.all(
      Array.from({ length: 10 }, () =>
        openStream("/v1/deployments/1111111111111111111111/timeline", key.key),
      ),
    );
    expect(new Set(missing.map((s) => s.status))).toEqual(new Set([404]));
    const malformed = await openStream(path, key.key, { "last-event-id": "x" });
    expect(malformed.status).toBe(400);
    await until("no place held", async () => (await placesOf(key.keyId)) === 0, 2000);
    const streams = await Promise.all(Array.from({ length: 10 }, () => openStream(path, key.key)));
    expect(statuses(streams)).toEqual(Array(10).fill(200));
    await cancelAll(streams);
  });
});

describe("a place outlives neither its stream nor its lease (§33: within 20 s)", () => {
  // The lost renewals and releases below are logged on purpose, and checked.
  const warnings = captureLogs("warn");
  const warned = () => warnings.lines().map((line) => line.msg);

  it("a lease is 20 s, renewed four times a lease", async () => {
    expect(STREAM_LEASE_MS).toBe(20_000);
    const { owner, path } = await deploymentOfStacks(1);
    const key = await createApiKey(owner);
    const opened = Date.now();
    const stream = await openStream(path, key.key);
    const until = await runInDurableObject(limiterOf(`key:${key.keyId}`), (_, state: DurableObjectState) =>
      state.storage.sql.exec<{ until: number }>("SELECT until FROM stream_leases").one(),
    );
    expect(until.until - opened).toBeGreaterThan(STREAM_LEASE_MS - 2000);
    expect(until.until - Date.now()).toBeLessThanOrEqual(STREAM_LEASE_MS);
    await stream.cancel();
  });

  it("a stream that lasts renews its place: it holds it over many leases", async () => {
    const { owner, path } = await deploymentOfStacks(1);
    const key = await createApiKey(owner);
    // Leases of 1 s (not less: a renewal late by a lease on this shared machine would lose one).
    const fetcher = withSettings({ STREAM_LEASE_MS_OVERRIDE: "1000" });
    const held = await Promise.all(Array.from({ length: 10 }, () => openStream(path, key.key, {}, fetcher)));
    expect(statuses(held)).toEqual(Array(10).fill(200));
    await sleep(4000); // four leases
    expect(await placesOf(key.keyId)).toBe(10);
    expectNoPlace(await openStream(path, key.key, {}, fetcher));
    await cancelAll(held);
  });

  it("streams whose renewals and releases are lost (their isolate gone) free their places when their leases lapse", async () => {
    const { owner, path } = await deploymentOfStacks(1);
    const key = await createApiKey(owner);
    // Their Worker reaches the limiter to be admitted, and never again: as if it died after.
    const admitOnly = {
      idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
      get: (id: DurableObjectId) => {
        const stub = env.RATE_LIMITER.get(id);
        return {
          admit: (r: Parameters<RateLimiter["admit"]>[0]) => stub.admit(r),
          recordBookmark: (b: string) => stub.recordBookmark(b),
          renewStream: () => Promise.reject(new Error("the isolate is gone")),
          releaseStream: () => Promise.reject(new Error("the isolate is gone")),
        };
      },
    };
    const leaseMs = 1000;
    const gone = withSettings({ STREAM_LEASE_MS_OVERRIDE: String(leaseMs), RATE_LIMITER: admitOnly });
    const held = await Promise.all(Array.from({ length: 10 }, () => openStream(path, key.key, {}, gone)));
    expect(statuses(held)).toEqual(Array(10).fill(200));
    const admitted = Date.now();
    // Their clients go away; no release reaches the object: the places are still held...
    await cancelAll(held);
    expectNoPlace(await openStream(path, key.key));
    // ...until their leases lapse, a lease after they were taken (renewals all lost).
    await until("the leases lapsed", async () => (await placesOf(key.keyId)) === 0, 3000);
    expect(Date.now() - admitted).toBeLessThan(leaseMs + 1000);
    const next = await openStream(path, key.key);
    expect(next.status).toBe(200);
    await next.cancel();
    expect(warned()).toContain("could not give a live stream's place back; it lapses with its lease");
  });

  it("a stream whose place was taken while its renewals were lost ends, and its client resumes", async () => {
    const { owner, deployment, path } = await deploymentOfStacks(1);
    const key = await createApiKey(owner);
    let renewals = true;
    const flaky = {
      idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
      get: (id: DurableObjectId) => {
        const stub = env.RATE_LIMITER.get(id);
        return {
          admit: (r: Parameters<RateLimiter["admit"]>[0]) => stub.admit(r),
          recordBookmark: (b: string) => stub.recordBookmark(b),
          renewStream: (r: Parameters<RateLimiter["renewStream"]>[0]) =>
            renewals ? stub.renewStream(r) : Promise.reject(new Error("unreachable")),
          releaseStream: (leaseId: string) => stub.releaseStream(leaseId),
        };
      },
    };
    const fetcher = withSettings({ STREAM_LEASE_MS_OVERRIDE: "1000", RATE_LIMITER: flaky });
    const held = await Promise.all(Array.from({ length: 10 }, () => openStream(path, key.key, {}, fetcher)));
    await Promise.all(held.map((s) => nextEntries(s, 1)));
    renewals = false;
    await until("the leases lapsed", async () => (await placesOf(key.keyId)) === 0, 5000);
    // Ten others take the places meanwhile.
    const others = await Promise.all(Array.from({ length: 10 }, () => openStream(path, key.key)));
    expect(statuses(others)).toEqual(Array(10).fill(200));
    renewals = true;
    // At their next renewal the first ten find their places gone, and end without `end`.
    for (const stream of held) expect(await stream.next(5000)).toBeNull();
    expect(await placesOf(key.keyId)).toBe(10);
    await cancelAll(others);
    await until("no socket left", async () => (await openSockets(deployment.id)) === 0, 3000);
    expect(warned()).toContain("could not renew a live stream's place; renewing at the next beat");
    expect(warned()).toContain("a live stream lost its place among its key family's; the stream ends");
  });
});
