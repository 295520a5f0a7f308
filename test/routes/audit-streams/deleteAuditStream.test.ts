/** deleteAuditStream: DELETE /v1/audit-streams/{id} (API_CONTRACT §30). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { caughtUp, createStream, receiverBucket } from "../../helpers/audit-streams";
import { expectError } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, createProject } from "../../helpers/factories";
import { limitOf } from "../../helpers/limits";
import { runCommonRouteTests } from "../../helpers/security";
import { sleep } from "../../helpers/wait";
import { allowTheLocalReceiver, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("DELETE /v1/audit-streams/{id}", () => {
  it("204; then 404; nothing more is sent; its count is freed", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);
    await caughtUp(owner, stream.id);
    expect((await limitOf(owner, "audit_streams")).used).toBe(1);
    expect((await request("DELETE", `/v1/audit-streams/${stream.id}`, { key: owner.key })).status).toBe(204);
    expectError(await request("GET", `/v1/audit-streams/${stream.id}`, { key: owner.key }), 404, "not_found");
    expectError(
      await request("DELETE", `/v1/audit-streams/${stream.id}`, { key: owner.key }),
      404,
      "not_found",
    );
    expect((await limitOf(owner, "audit_streams")).used).toBe(0);
    const before = (await received(bucket)).length;
    await createProject(owner);
    await sleep(1500);
    expect((await received(bucket)).length).toBe(before);
  });

  it("a member is 403 unauthorized; another organization's stream is 404", async () => {
    const { org, owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    const member = await createCaller(org, "member", owner);
    expectError(
      await request("DELETE", `/v1/audit-streams/${stream.id}`, { key: member.key }),
      403,
      "unauthorized",
    );
    const { owner: stranger } = await createOrgWithOwner();
    expectError(
      await request("DELETE", `/v1/audit-streams/${stream.id}`, { key: stranger.key }),
      404,
      "not_found",
    );
    expect((await request("GET", `/v1/audit-streams/${stream.id}`, { key: owner.key })).status).toBe(200);
  });

  runCommonRouteTests("DELETE /v1/audit-streams/{id}", async () => {
    const { owner } = await createOrgWithOwner();
    const stream = await createStream(owner, receiverBucket().url, { enabled: false });
    return { method: "DELETE", path: `/v1/audit-streams/${stream.id}`, caller: owner };
  });
});
