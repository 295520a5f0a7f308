/** replayAuditStream: POST /v1/audit-streams/{id}/replay (API_CONTRACT §30). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  createStream,
  eventually,
  readStream,
  receiverBucket,
  sequencesReceived,
} from "../../helpers/audit-streams";
import { expectError } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, createProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { allowTheLocalReceiver } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("POST /v1/audit-streams/{id}/replay", () => {
  it("202: goes back to from_sequence and sends again from there, in order", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url, { from: "start" });
    await createProject(owner);
    const caughtUp = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const res = await request<{ delivered_through: number }>(
      "POST",
      `/v1/audit-streams/${stream.id}/replay`,
      {
        key: owner.key,
        body: { from_sequence: 2 },
      },
    );
    expect(res.status, res.raw).toBe(202);
    expect(res.body.delivered_through).toBe(1);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const sequences = await sequencesReceived(bucket);
    const upTo = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    // Everything once, then from 2 again, through the replay's own entry.
    expect(sequences).toEqual([...upTo(1, caughtUp.delivered_through), ...upTo(2, done.delivered_through)]);
  });

  it("from_sequence 1 to delivered_through + 1, else 400 cause from_sequence", async () => {
    const { org, owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    const replay = (body: unknown) =>
      request("POST", `/v1/audit-streams/${stream.id}/replay`, { key: owner.key, body });
    for (const from_sequence of [0, -1, stream.delivered_through + 2, 1.5, "3"]) {
      expectError(await replay({ from_sequence }), 400, "bad_input", "from_sequence");
    }
    expectError(await replay({}), 400, "bad_input", "from_sequence");
    expect((await replay({ from_sequence: stream.delivered_through + 1 })).status).toBe(202);
    const beforeSecond = await readStream(owner, stream.id);
    const secondReplay = await replay({ from_sequence: 1 });
    expect(secondReplay.status).toBe(202);
    // Their audit entries name the record's fields that changed, as an update's do (§14): the
    // first left the position where it was and moved only `updated_at`.
    const log = await request<{ data: { changes: Record<string, { from: unknown; to: unknown }> }[] }>(
      "GET",
      `/v1/orgs/${org.id}/audit-log?action=replayAuditStream&sort_by=created_at`,
      { key: owner.key },
    );
    const [first, second] = log.body.data.map((entry) => entry.changes);
    expect(Object.keys(first ?? {})).toEqual(["updated_at"]);
    expect(first?.updated_at?.from).toBe(stream.updated_at);
    expect(Object.keys(second ?? {}).sort()).toEqual(["delivered_through", "pending", "updated_at"]);
    expect(second?.delivered_through).toEqual({ from: stream.delivered_through, to: 0 });
    expect(second?.updated_at?.from).toBe(first?.updated_at?.to);
    // `pending` from the record just before to the record the replay answered, its own entry counted.
    expect(second?.pending).toEqual({
      from: beforeSecond.pending,
      to: (secondReplay.body as { pending: number }).pending,
    });
  });

  it("a member is 403 unauthorized", async () => {
    const { org, owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    const member = await createCaller(org, "member", owner);
    expectError(
      await request("POST", `/v1/audit-streams/${stream.id}/replay`, {
        key: member.key,
        body: { from_sequence: 1 },
      }),
      403,
      "unauthorized",
    );
  });

  runCommonRouteTests("POST /v1/audit-streams/{id}/replay", async () => {
    const { owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    return {
      method: "POST",
      path: `/v1/audit-streams/${stream.id}/replay`,
      body: { from_sequence: 1 },
      caller: owner,
    };
  });
});
