/**
 * API_CONTRACT §30, a stream changed while a batch is out (a pause, a resume, a new url): the batch's
 * failure is still the stream's `last_error` (the route test of PATCH shows it) unless something was
 * acknowledged since, and the run that
 * sent it asks to run again at once, by what the stream says now, instead of after its own retry
 * delay: the change's wake-up came while the run was out, and the run's answer replaces it
 * (src/audit-stream/object.ts). A pause alone leaves the batch's acknowledgement its due: the
 * receiver did acknowledge it. Run here by hand, beside the stream's object, with a retry
 * schedule of a minute.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../../../src/context";
import { deliverStream } from "../../../src/services/audit/stream-delivery";
import { request } from "../../helpers/api";
import {
  createStream,
  eventually,
  readStream,
  receiverBucket,
  scriptReceiver,
} from "../../helpers/audit-streams";
import { createOrgWithOwnerIn, d1 } from "../../helpers/databases";
import { allowTheLocalReceiver, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("a stream changed while its batch is out", () => {
  it("a new url while the old one fails: the run asks to run again at once, not after its retry delay; the new url gets the batch", async () => {
    const { owner } = await createOrgWithOwnerIn("DB");
    const old = receiverBucket();
    // Every attempt at the old url answers 500, a second and a half after it arrives.
    await scriptReceiver(old.bucket, [], 1500);
    // Created paused, so that its object sends nothing; then enabled underneath it, without a wake.
    const stream = await createStream(owner, `${old.url}?status=500`, { enabled: false });
    await d1("DB").prepare("UPDATE audit_streams SET enabled = 1 WHERE id = ?").bind(stream.id).run();
    const ctx = createServiceContext({ env, requestId: "changed-in-flight", database: "DB" });
    const run = deliverStream(ctx, stream.id, 5_000, [60_000]);
    await eventually(
      () => received(old.bucket),
      (list) => list.length > 0,
    );
    const next = receiverBucket();
    const moved = await request("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { url: next.url },
    });
    expect(moved.status, moved.raw).toBe(200);
    const answer = await run;
    expect(answer?.at).toBeLessThanOrEqual(Date.now());
    expect(await received(old.bucket)).toHaveLength(1);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    expect(done.delivered_through).toBeGreaterThan(stream.delivered_through);
    // The old url's failure came after the new url's acknowledgement: it is no longer the last word.
    expect(done.last_error).toBeNull();
    expect((await received(next.bucket)).length).toBeGreaterThan(0);
  });

  it("a pause while a batch is out: the receiver's acknowledgement still moves delivered_through and clears last_error; nothing more is sent", async () => {
    const { owner } = await createOrgWithOwnerIn("DB");
    const hook = receiverBucket();
    // Every attempt is acknowledged (200), a second and a half after it arrives.
    await scriptReceiver(hook.bucket, [], 1500);
    const stream = await createStream(owner, hook.url, { enabled: false });
    // Enabled underneath its object, without a wake; an earlier failure on record.
    await d1("DB")
      .prepare(
        "UPDATE audit_streams SET enabled = 1, last_error_at = ?, last_error_status_code = 500, last_error_message = 'HTTP 500' WHERE id = ?",
      )
      .bind(new Date().toISOString(), stream.id)
      .run();
    const ctx = createServiceContext({ env, requestId: "paused-in-flight", database: "DB" });
    const run = deliverStream(ctx, stream.id, 5_000, [60_000]);
    await eventually(
      () => received(hook.bucket),
      (list) => list.length > 0,
    );
    const paused = await request("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { enabled: false },
    });
    expect(paused.status, paused.raw).toBe(200);
    await run;
    const [batch] = await received(hook.bucket);
    const sequences = (batch?.body ?? "")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { sequence: number }).sequence);
    const after = await readStream(owner, stream.id);
    expect(after.enabled).toBe(false);
    expect(after.delivered_through).toBe(sequences.at(-1));
    expect(after.last_error).toBeNull();
    expect(await received(hook.bucket)).toHaveLength(1);
  });
});
