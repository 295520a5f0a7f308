/** getAuditStream: GET /v1/audit-streams/{id} (API_CONTRACT §30). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { createStream, receiverBucket } from "../../helpers/audit-streams";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import { createApiKey, createCaller, createOrgWithOwner, createProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { allowTheLocalReceiver } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("GET /v1/audit-streams/{id}", () => {
  it("pending is the organization's last sequence minus delivered_through, whatever other organizations hold", async () => {
    const { owner } = await createOrgWithOwner();
    // A busier organization first, so that no sequence of another organization can be mistaken for this one's.
    const { owner: busy } = await createOrgWithOwner();
    for (let i = 0; i < 5; i++) await createProject(busy);
    const stream = await createStream(owner, receiverBucket().url, { enabled: false, from: "start" });
    const read = await request<{ pending: number; delivered_through: number }>(
      "GET",
      `/v1/audit-streams/${stream.id}`,
      {
        key: owner.key,
      },
    );
    expect(read.status).toBe(200);
    // The organization, its owner's membership and key, the stream: 4 entries, none delivered.
    expect(read.body).toMatchObject({ delivered_through: 0, pending: 4 });
    await createProject(owner);
    const later = await request<{ pending: number }>("GET", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
    });
    expect(later.body.pending).toBe(5);
    expect(later.headers.get("etag")).not.toBe(read.headers.get("etag"));
  });

  it("a write's answer counts its own entry in pending, as a read right after it does (create, update, replay)", async () => {
    const { owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    const read = async () =>
      (await request<{ pending: number }>("GET", `/v1/audit-streams/${stream.id}`, { key: owner.key })).body
        .pending;
    expect(stream.pending).toBe(await read());
    const renamed = await request<{ pending: number }>("PATCH", `/v1/audit-streams/${stream.id}`, {
      key: owner.key,
      body: { name: "renamed" },
    });
    expect(renamed.status, renamed.raw).toBe(200);
    expect(renamed.body.pending).toBe(await read());
    const replayed = await request<{ pending: number }>("POST", `/v1/audit-streams/${stream.id}/replay`, {
      key: owner.key,
      body: { from_sequence: 1 },
    });
    expect(replayed.status, replayed.raw).toBe(202);
    expect(replayed.body.pending).toBe(await read());
  });

  it("another organization's stream, or none, is 404; a member and a restricted key 403", async () => {
    const { org, owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    const { owner: stranger } = await createOrgWithOwner();
    expectError(
      await request("GET", `/v1/audit-streams/${stream.id}`, { key: stranger.key }),
      404,
      "not_found",
    );
    expectError(
      await request("GET", `/v1/audit-streams/${UNKNOWN_ID}`, { key: owner.key }),
      404,
      "not_found",
    );
    const member = await createCaller(org, "member", owner);
    expectError(
      await request("GET", `/v1/audit-streams/${stream.id}`, { key: member.key }),
      403,
      "unauthorized",
    );
    const project = await createProject(owner);
    const restricted = await createApiKey(owner, { project_ids: [project.id] });
    expectError(
      await request("GET", `/v1/audit-streams/${stream.id}`, { key: restricted.key }),
      403,
      "unauthorized",
    );
  });

  runCommonRouteTests("GET /v1/audit-streams/{id}", async () => {
    const { owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    return { method: "GET", path: `/v1/audit-streams/${stream.id}`, caller: owner };
  });
});
