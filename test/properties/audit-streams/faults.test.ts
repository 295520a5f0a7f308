/**
 * API_CONTRACT §30, faults: a stream's object killed between a send and its acknowledgement, and
 * an acknowledgement that could not be recorded, send the batch again; nothing is skipped. The
 * cron's sweep wakes a stream whose wake-up was lost.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  batches,
  createStream,
  eventually,
  readStream,
  receiverBucket,
  scriptReceiver,
  sequencesReceived,
} from "../../helpers/audit-streams";
import { runCron } from "../../helpers/cron";
import { type Caller, createOrgWithOwner, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { sleep } from "../../helpers/wait";
import { allowTheLocalReceiver } from "../../helpers/webhooks";

allowTheLocalReceiver();
const errors = captureLogs("error");
captureLogs("log");

const streamObject = (id: string) => env.AUDIT_STREAMS.get(env.AUDIT_STREAMS.idFromName(id));

/**
 * Enables the stream with every write of an acknowledgement refused (D1 unreachable, say) until
 * its first batch has arrived and `during` has run; then lets them through.
 */
async function withAcksRefused(
  owner: Caller,
  bucket: string,
  streamId: string,
  during: () => Promise<unknown>,
) {
  const trigger = `refuse_acks_${streamId}`;
  await env.DB.exec(
    `CREATE TRIGGER ${trigger} BEFORE UPDATE OF delivered_through ON audit_streams WHEN NEW.id = '${streamId}' AND NEW.delivered_through > OLD.delivered_through BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
  );
  try {
    await request("PATCH", `/v1/audit-streams/${streamId}`, { key: owner.key, body: { enabled: true } });
    await eventually(
      () => batches(bucket),
      (list) => list.length > 0,
    );
    await during();
  } finally {
    await env.DB.exec(`DROP TRIGGER IF EXISTS ${trigger}`);
  }
}

describe("faults", () => {
  it("its object killed while a batch is in flight: the batch is sent again, nothing skipped", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    // The first attempt is held for 3 s: the object is killed meanwhile, before it records anything.
    await scriptReceiver(bucket, [200], 3000);
    const stream = await createStream(owner, url);
    await eventually(
      () => batches(bucket),
      (list) => list.length > 0,
    );
    // Killed mid-attempt, as a crash of the machine would: its storage stays, its run is lost.
    await expect(
      runInDurableObject(streamObject(stream.id), (_instance, state) => state.abort("killed by the test")),
    ).rejects.toThrow("killed by the test");
    await scriptReceiver(bucket, []);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
      45_000,
    );
    const got = await batches(bucket);
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(got[1]?.id).toBe(got[0]?.id);
    const sequences = [...new Set(await sequencesReceived(bucket))];
    expect(sequences).toEqual(
      Array.from(
        { length: done.delivered_through - stream.delivered_through },
        (_, i) => stream.delivered_through + 1 + i,
      ),
    );
  }, 60_000);

  it("an acknowledgement that could not be recorded: the run fails, is retried, and the batch sent again", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { enabled: false });
    // Its first acknowledgement's write fails (D1 unreachable, say), and is retried.
    await withAcksRefused(owner, bucket, stream.id, () =>
      eventually(
        async () => errors.lines().filter((l) => l.msg === "audit stream run failed; retried"),
        (lines) => lines.length > 0,
      ),
    );
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
      45_000,
    );
    const got = await batches(bucket);
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(got[1]?.id).toBe(got[0]?.id);
    expect([...new Set(await sequencesReceived(bucket))]).toEqual(
      Array.from(
        { length: done.delivered_through - stream.delivered_through },
        (_, i) => stream.delivered_through + 1 + i,
      ),
    );
    expect(errors.lines().find((l) => l.msg === "audit stream run failed; retried")).toMatchObject({
      stream_id: stream.id,
      error: expect.stringContaining("refused by the test"),
    });
  }, 60_000);

  it("a batch whose acknowledgement was lost is sent again with exactly its entries: one webhook-id, one body, whatever was written meanwhile", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { enabled: false });
    // The first batch is sent again and again (every 200 ms here) while more entries are written
    // behind it.
    await withAcksRefused(owner, bucket, stream.id, async () => {
      for (let i = 0; i < 3; i++) {
        const res = await request("POST", "/v1/projects", {
          key: owner.key,
          body: { name: unique("behind") },
        });
        expect(res.status, res.raw).toBe(201);
      }
      await eventually(
        () => batches(bucket),
        (list) => list.length >= 3,
      );
    });
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
      45_000,
    );
    const got = await batches(bucket);
    const bodies = new Map<string, Set<string>>();
    for (const batch of got) bodies.set(batch.id, (bodies.get(batch.id) ?? new Set()).add(batch.body));
    expect(got.filter((batch) => batch.id === got[0]?.id).length).toBeGreaterThanOrEqual(3);
    expect([...bodies].filter(([, set]) => set.size > 1).map(([id]) => id)).toEqual([]);
    // The entries written behind the first batch went in batches of their own, under their own ids.
    expect(new Set(got.map((batch) => batch.id)).size).toBeGreaterThanOrEqual(2);
    expect([...new Set(await sequencesReceived(bucket))]).toEqual(
      Array.from(
        { length: done.delivered_through - stream.delivered_through },
        (_, i) => stream.delivered_through + 1 + i,
      ),
    );
  }, 60_000);

  it("the cron wakes a stream behind its log whose wake-up was lost", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { enabled: false });
    // Enabled behind the service's back: no entry announces it, no object is woken.
    await env.DB.prepare("UPDATE audit_streams SET enabled = 1 WHERE id = ?").bind(stream.id).run();
    await sleep(1500);
    expect(await batches(bucket)).toEqual([]);
    await runCron();
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    expect((await sequencesReceived(bucket)).at(-1)).toBe(done.delivered_through);
  });
});
