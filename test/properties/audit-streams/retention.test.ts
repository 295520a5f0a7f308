/**
 * API_CONTRACT §30 against §14's 400 days: an entry a stream has not had acknowledged is never
 * removed by the daily retention, so a stream paused, or failing, for longer than that still
 * delivers every entry, none skipped, and its claimed batch is still there to send again. Once
 * acknowledged, the entries go as every other.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  batches,
  caughtUp,
  createStream,
  eventually,
  receiverBucket,
  scriptReceiver,
  sequencesReceived,
} from "../../helpers/audit-streams";
import { RETENTION_CRON, runCron } from "../../helpers/cron";
import { type Caller, createOrgWithOwner, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { allowTheLocalReceiver } from "../../helpers/webhooks";

allowTheLocalReceiver();
// The cron logs a summary of each run; a failing receiver's attempts are logged too.
captureLogs("log");
captureLogs("warn");

/** Every entry of the organization made older than the retention (400 days). */
const ageEverything = (orgId: string) =>
  env.DB.prepare("UPDATE audit_log SET created_at = ? WHERE org_id = ?")
    .bind(new Date(Date.now() - 500 * 86_400_000).toISOString(), orgId)
    .run();

const sequencesHeld = async (orgId: string) =>
  (
    await env.DB.prepare("SELECT sequence FROM audit_log WHERE org_id = ? ORDER BY sequence")
      .bind(orgId)
      .all<{ sequence: number }>()
  ).results.map((r) => r.sequence);

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function writeEntries(owner: Caller, count: number) {
  for (let i = 0; i < count; i++) {
    const res = await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("kept") } });
    expect(res.status, res.raw).toBe(201);
  }
}

describe("retention and streams (§14, §30)", () => {
  it("a stream paused past the retention: the entries it owes are kept, then delivered, none skipped; then they go", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { enabled: false, from: "start" });
    await writeEntries(owner, 3);
    const written = await sequencesHeld(org.id);
    expect(written.length).toBeGreaterThan(3);

    await ageEverything(org.id);
    await runCron(RETENTION_CRON);
    // Every one is still owed (the stream acknowledged none): none removed.
    expect(await sequencesHeld(org.id)).toEqual(written);

    const resumed = await request("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { enabled: true },
    });
    expect(resumed.status, resumed.raw).toBe(200);
    const done = await caughtUp(owner, stream.id, 30_000);
    expect(done.pending).toBe(0);
    const last = (await sequencesHeld(org.id)).at(-1) as number;
    expect(done.delivered_through).toBe(last);
    expect(await sequencesReceived(bucket)).toEqual(range(1, last));

    // Acknowledged now: the retention removes them, all but the organization's newest.
    await ageEverything(org.id);
    await runCron(RETENTION_CRON);
    expect(await sequencesHeld(org.id)).toEqual([last]);
  }, 60_000);

  it("a batch failing past the retention: it is kept and sent again, then everything after it", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    await scriptReceiver(
      bucket,
      Array.from({ length: 1000 }, () => 500),
    );
    const stream = await createStream(owner, url, { from: "start" });
    // Its first batch is claimed and failing.
    await eventually(
      () => batches(bucket),
      (list) => list.length > 0,
    );
    await writeEntries(owner, 2);
    const written = await sequencesHeld(org.id);

    await ageEverything(org.id);
    await runCron(RETENTION_CRON);
    expect(await sequencesHeld(org.id)).toEqual(written);

    await scriptReceiver(bucket, []);
    const done = await caughtUp(owner, stream.id, 30_000);
    expect(done.pending).toBe(0);
    const last = written.at(-1) as number;
    expect(done.delivered_through).toBeGreaterThanOrEqual(last);
    // The failing batch went again under its own webhook-id, and nothing was skipped after it.
    const sent = await batches(bucket);
    expect(sent.filter((b) => b.id === sent[0]?.id).length).toBeGreaterThan(1);
    expect([...new Set(await sequencesReceived(bucket))].slice(0, last)).toEqual(range(1, last));
  }, 60_000);
});
