/** updateAuditStream: PATCH /v1/audit-streams/{id} (API_CONTRACT §30). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  createStream,
  eventually,
  readStream,
  receiverBucket,
  scriptReceiver,
  sequencesReceived,
} from "../../helpers/audit-streams";
import { expectError } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, createProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { sleep } from "../../helpers/wait";
import { allowTheLocalReceiver, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

type Stream = {
  id: string;
  name: string;
  url: string;
  enabled: boolean;
  pending: number;
  delivered_through: number;
};

describe("PATCH /v1/audit-streams/{id}", () => {
  it("its entry's changes are every field that changed, updated_at included, as for every record (§14)", async () => {
    const { owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    const before = await readStream(owner, stream.id);
    const res = await request<Record<string, unknown>>("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { name: "renamed" },
    });
    expect(res.status, res.raw).toBe(200);
    const log = await request<{ data: { changes: Record<string, unknown> }[] }>(
      "GET",
      `/v1/orgs/${owner.orgId}/audit-log?action=updateAuditStream`,
      { key: owner.key },
    );
    expect(log.body.data[0]?.changes).toEqual({
      name: { from: before.name, to: "renamed" },
      updated_at: { from: before.updated_at, to: res.body.updated_at },
    });
  });

  it("renames and moves it; enabled false pauses (nothing is sent), true resumes at delivered_through + 1", async () => {
    const { owner } = await createOrgWithOwner();
    const first = receiverBucket();
    const stream = await createStream(owner, first.url);
    await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const paused = await request<Stream>("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { enabled: false, name: "paused" },
    });
    expect(paused.body).toMatchObject({ enabled: false, name: "paused" });
    await createProject(owner);
    await createProject(owner);
    await sleep(1500);
    expect((await readStream(owner, stream.id)).pending).toBe(3); // the pause's own entry and two projects
    const next = receiverBucket();
    const moved = await request<Stream>("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { url: next.url, enabled: true },
    });
    expect(moved.status, moved.raw).toBe(200);
    expect(moved.body.url).toBe(next.url);
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    const before = await sequencesReceived(first.bucket);
    expect(await sequencesReceived(next.bucket)).toEqual(
      Array.from(
        { length: done.delivered_through - (before.at(-1) ?? 0) },
        (_, i) => (before.at(-1) ?? 0) + 1 + i,
      ),
    );
  });

  it("a batch out when the stream is paused still fails into last_error (§30: the last failed attempt), and nothing more is sent", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    // Every attempt answers 500, a second and a half after it arrives.
    await scriptReceiver(bucket, [], 1500);
    const stream = await createStream(owner, `${url}?status=500`);
    await eventually(
      () => received(bucket),
      (list) => list.length > 0,
    );
    const paused = await request<Stream>("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { enabled: false },
    });
    expect(paused.status, paused.raw).toBe(200);
    const failed = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.last_error !== null,
    );
    expect(failed).toMatchObject({ enabled: false, delivered_through: stream.delivered_through });
    expect(failed.last_error).toEqual({ at: expect.any(String), status_code: 500, message: "HTTP 500" });
    await sleep(1000);
    expect(await received(bucket)).toHaveLength(1); // paused: no retry
  });

  it("nothing to change is 400; a url the integrations' rules refuse is 400; If-Match is honoured", async () => {
    const { owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    const patch = (body: unknown, headers: Record<string, string> = {}) =>
      request<Stream>("PATCH", `/v1/audit-streams/${stream.id}`, { key: owner.key, body, headers });
    expectError(await patch({}), 400, "bad_input");
    expectError(await patch({ url: "ftp://x.example.com" }), 400, "bad_input", "url");
    expectError(await patch({ name: "" }), 400, "bad_input", "name");
    expectError(await patch({ signing_secret: "x" }), 400, "bad_input", "signing_secret");
    const read = await request("GET", `/v1/audit-streams/${stream.id}`, { key: owner.key });
    const etag = read.headers.get("etag") ?? "";
    expectError(await patch({ name: "x" }, { "if-match": '"stale"' }), 409, "conflict", "header.if-match");
    expect((await patch({ name: "x" }, { "if-match": etag })).status).toBe(200);
  });

  it("a member is 403 unauthorized", async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    expectError(
      await request("PATCH", `/v1/audit-streams/${stream.id}`, { key: member.key, body: { name: "x" } }),
      403,
      "unauthorized",
    );
    expect(await received("none")).toEqual([]);
  });

  runCommonRouteTests("PATCH /v1/audit-streams/{id}", async () => {
    const { owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    return { method: "PATCH", path: `/v1/audit-streams/${stream.id}`, body: { name: "n" }, caller: owner };
  });
});
