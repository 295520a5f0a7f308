/**
 * API_CONTRACT §30, what a stream sends and when: batches of up to 100 consecutive entries, each
 * sent only once the one before it was acknowledged; failed attempts retried with the same
 * `webhook-id`, nothing skipped; `410 Gone` pauses; a slow receiver delays only its own stream; a
 * stream paused for 10,000 entries catches up in order. Through the real queue, the stream's
 * Durable Object and the local receiver (the retry schedule shortened by vitest.config.ts).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  batches,
  caughtUp,
  createStream,
  eventually,
  readStream,
  receiverBucket,
  scriptReceiver,
  sequencesReceived,
} from "../../helpers/audit-streams";
import { type Caller, createOrgWithOwner, createProject, unique } from "../../helpers/factories";
import { sleep } from "../../helpers/wait";
import { allowTheLocalReceiver, hook, integrate, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

/** `count` entries of the organization written straight to D1 (numbered after its latest), for volume. */
async function bulkEntries(orgId: string, count: number): Promise<void> {
  const base = await env.DB.prepare("SELECT coalesce(max(sequence), 0) AS n FROM audit_log WHERE org_id = ?")
    .bind(orgId)
    .first<{ n: number }>();
  const prefix = crypto.randomUUID().replaceAll("-", "").slice(0, 24);
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?4)
     INSERT INTO audit_log (id, org_id, action, target_type, target_id, actor_type, request_id, created_at, sequence)
     SELECT ?1 || printf('%08x', i), ?2, 'test.bulk', 'x', 'x', 'admin', 'bulk', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?3 + i FROM n`,
  )
    .bind(prefix, orgId, base?.n ?? 0, count)
    .run();
}

/** One more entry through the API: its commit wakes the organization's streams. */
const touch = (caller: Caller) =>
  request("POST", "/v1/projects", { key: caller.key, body: { name: unique("touch") } });

const lastSequence = async (orgId: string) =>
  (
    await env.DB.prepare("SELECT max(sequence) AS n FROM audit_log WHERE org_id = ?")
      .bind(orgId)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("delivery", () => {
  it("batches of up to 100 consecutive entries, in order, each after the one before was acknowledged", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { from: "start" });
    await bulkEntries(owner.orgId, 250);
    await touch(owner);
    const last = await lastSequence(owner.orgId);
    const got = await eventually(
      () => batches(bucket),
      (list) => list.flatMap((b) => b.entries).length >= last,
      20_000,
    );
    const sequences = got.flatMap((b) => b.entries.map((e) => e.sequence));
    expect(sequences).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    for (const batch of got) {
      expect(batch.entries.length).toBeLessThanOrEqual(100);
      expect(batch.id).toBe(`${stream.id}.${batch.entries[0]?.sequence}`);
    }
    expect(got.filter((b) => b.entries.length === 100).length).toBeGreaterThanOrEqual(2);
    expect(
      (
        await eventually(
          () => readStream(owner, stream.id),
          (s) => s.pending === 0,
        )
      ).delivered_through,
    ).toBe(last);
  });

  it("a batch carries fewer than 100 entries when theirs would pass 4 MiB, never fewer than one", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { enabled: false });
    await bulkEntries(owner.orgId, 30);
    // 300 KB of changes each: 9 MB in all.
    await env.DB.prepare(
      "UPDATE audit_log SET changes = json_object('note', json_object('from', NULL, 'to', ?)) WHERE org_id = ? AND action = 'test.bulk'",
    )
      .bind("x".repeat(300_000), owner.orgId)
      .run();
    await request("PATCH", `/v1/audit-streams/${stream.id}`, { key: owner.key, body: { enabled: true } });
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const got = await batches(bucket);
    for (const batch of got) expect(batch.body.length).toBeLessThan(4 * 1024 * 1024 + 400_000);
    expect(got.length).toBeGreaterThanOrEqual(3);
    expect(got.flatMap((b) => b.entries.map((e) => e.sequence))).toEqual(
      Array.from(
        { length: done.delivered_through - stream.delivered_through },
        (_, i) => stream.delivered_through + 1 + i,
      ),
    );
  });

  it("a failed attempt is retried with the same webhook-id; nothing moves until a 2xx; last_error is true, then cleared", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    await scriptReceiver(bucket, [500, 503]);
    const stream = await createStream(owner, url);
    const failing = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.last_error !== null,
    );
    expect(failing.delivered_through).toBe(stream.delivered_through);
    expect(failing.last_error).toEqual({
      at: expect.any(String),
      status_code: expect.any(Number),
      message: expect.stringMatching(/^HTTP 50[03]$/),
    });
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    expect(done.last_error).toBeNull();
    const got = await batches(bucket);
    expect(got.map((b) => b.id)).toEqual(Array(3).fill(`${stream.id}.${stream.delivered_through + 1}`));
    expect(got.map((b) => b.body)).toEqual(Array(3).fill(got[0]?.body));
  });

  it("a retry is the same batch: entries written after its first attempt wait for the next, under their own webhook-id", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    await scriptReceiver(bucket, [500, 500]);
    const stream = await createStream(owner, url);
    await eventually(
      () => batches(bucket),
      (list) => list.length > 0,
    );
    // Written while the batch waits for its retry (the tests' schedule: 200 ms, then 400 ms).
    const wrote = await touch(owner);
    expect(wrote.status, wrote.raw).toBe(201);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const got = await batches(bucket);
    const first = got[0] as (typeof got)[number];
    // Both failed attempts and the acknowledged one: byte for byte the first batch.
    expect(got.slice(0, 3).map((b) => [b.id, b.body])).toEqual(Array(3).fill([first.id, first.body]));
    const after = got.slice(3);
    const last = first.entries.at(-1)?.sequence as number;
    expect(after.map((b) => b.id)).toEqual(after.map((b) => `${stream.id}.${b.entries[0]?.sequence}`));
    expect(after[0]?.entries[0]?.sequence).toBe(last + 1);
    expect(got.flatMap((b) => b.entries.map((e) => e.sequence)).slice(2 * first.entries.length)).toEqual(
      Array.from(
        { length: done.delivered_through - stream.delivered_through },
        (_, i) => stream.delivered_through + 1 + i,
      ),
    );
  });

  it("410 Gone pauses the stream; resuming sends from delivered_through + 1", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    await scriptReceiver(bucket, [410]);
    const stream = await createStream(owner, url);
    const gone = await eventually(
      () => readStream(owner, stream.id),
      (s) => !s.enabled,
    );
    expect(gone.enabled).toBe(false);
    expect(gone.last_error?.status_code).toBe(410);
    await touch(owner);
    await sleep(1500);
    expect(await received(bucket)).toHaveLength(1); // paused: nothing more
    const resumed = await request("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { enabled: true },
    });
    expect(resumed.status, resumed.raw).toBe(200);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const sequences = await sequencesReceived(bucket);
    // The refused batch again, then the rest, in order, nothing skipped.
    expect(sequences.slice(1)).toEqual(
      Array.from(
        { length: done.delivered_through - stream.delivered_through },
        (_, i) => stream.delivered_through + 1 + i,
      ),
    );
  });

  it("a slow receiver holds up its own stream only: another stream and a webhook go on meanwhile", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const slow = receiverBucket();
    const quick = receiverBucket();
    const hookBucket = unique("hook");
    await scriptReceiver(slow.bucket, [200, 200], 8000);
    await createStream(owner, slow.url);
    const fast = await createStream(owner, quick.url);
    await integrate(project.id, hook(hookBucket), { changelog: true });
    await request("POST", `/internal/v1/projects/${project.id}/events`, {
      body: { type: "changelog.created", data: {} },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    await eventually(
      () => readStream(owner, fast.id),
      (s) => s.pending === 0,
    );
    const [webhook] = await eventually(
      () => received(hookBucket),
      (list) => list.length > 0,
    );
    // Both arrived while the slow receiver still held its first batch.
    const held = (await received(slow.bucket))[0]?.at ?? 0;
    expect(held).toBeGreaterThan(0);
    const quickBatches = await batches(quick.bucket);
    expect(quickBatches.length).toBeGreaterThan(0);
    expect(Math.max(...quickBatches.map((b) => b.at))).toBeLessThan(held + 8000);
    expect(webhook?.at).toBeLessThan(held + 8000);
  });

  it("an entry reaches a healthy receiver within 10 s of its commit; the request never waits for it", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);
    await caughtUp(owner, stream.id);
    // From now on the receiver answers after 3 s: the write answers without it.
    await scriptReceiver(bucket, [200, 200, 200], 3000);
    const written = Date.now();
    const res = await touch(owner);
    const answered = Date.now();
    expect(res.status).toBe(201);
    expect(answered - written).toBeLessThan(3000);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const batch = (await batches(bucket)).find((b) =>
      b.entries.some((e) => e.sequence === done.delivered_through),
    );
    expect((batch?.at ?? Number.POSITIVE_INFINITY) - answered).toBeLessThan(10_000);
  });

  it("a stream paused for 10,000 entries catches up in order when resumed", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { enabled: false });
    await bulkEntries(owner.orgId, 10_000);
    const paused = await readStream(owner, stream.id);
    expect(paused.pending).toBe(10_001);
    expect(
      (await request("PATCH", `/v1/audit-streams/${stream.id}`, { key: owner.key, body: { enabled: true } }))
        .status,
    ).toBe(200);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
      60_000,
    );
    // All 10,002 (the stream's creation's entry, the 10,000, the resume's own), each once, in order.
    expect(done.delivered_through).toBe(stream.delivered_through + 10_002);
    const sequences = await sequencesReceived(bucket);
    expect(sequences).toEqual(
      Array.from(
        { length: done.delivered_through - stream.delivered_through },
        (_, i) => stream.delivered_through + 1 + i,
      ),
    );
    expect((await batches(bucket)).every((b) => b.entries.length <= 100)).toBe(true);
  }, 90_000);

  it("sends nothing of another organization", async () => {
    const { owner } = await createOrgWithOwner();
    const { owner: other } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);
    await touch(other);
    await touch(owner);
    await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    expect((await batches(bucket)).flatMap((b) => b.entries.map((e) => e.org_id))).toEqual(
      expect.arrayContaining([owner.orgId]),
    );
    expect((await batches(bucket)).flatMap((b) => b.entries).every((e) => e.org_id === owner.orgId)).toBe(
      true,
    );
  });
});
