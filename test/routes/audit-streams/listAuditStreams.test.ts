/** listAuditStreams: GET /v1/orgs/{org_id}/audit-streams (API_CONTRACT §30). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { createStream, receiverBucket } from "../../helpers/audit-streams";
import { expectError } from "../../helpers/expect";
import { createApiKey, createCaller, createOrgWithOwner, createProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { allowTheLocalReceiver } from "../../helpers/webhooks";

allowTheLocalReceiver();

type List = { data: { id: string; org_id: string }[]; has_more: boolean; next_page?: string };

describe("GET /v1/orgs/{org_id}/audit-streams", () => {
  it("lists the organization's streams, newest first, in §4 pages, never a signing secret", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { owner: other } = await createOrgWithOwner();
    const made = [];
    for (let i = 0; i < 3; i++)
      made.push(await createStream(owner, receiverBucket().url, { enabled: false }));
    await createStream(other, receiverBucket().url, { enabled: false });
    const first = await request<List>("GET", `/v1/orgs/${org.id}/audit-streams?limit=2`, { key: owner.key });
    expect(first.status).toBe(200);
    expect(first.body.data.map((s) => s.id)).toEqual([made[2]?.id, made[1]?.id]);
    expect(first.body.has_more).toBe(true);
    const second = await request<List>(
      "GET",
      `/v1/orgs/${org.id}/audit-streams?limit=2&after=${encodeURIComponent(first.body.next_page ?? "")}`,
      { key: owner.key },
    );
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: made[0]?.id })], has_more: false });
    expect(first.raw).not.toContain("whsec_");
    const ascending = await request<List>("GET", `/v1/orgs/${org.id}/audit-streams?sort_by=created_at`, {
      key: owner.key,
    });
    expect(ascending.body.data.map((s) => s.id)).toEqual(made.map((s) => s.id));
  });

  it("org owner and admin with audit:read; a member, a restricted key: 403; another organization: 404", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    const project = await createProject(owner);
    const restricted = await createApiKey(owner, { project_ids: [project.id] });
    const reader = await createApiKey(owner, { scopes: ["audit:read"] });
    const noScope = await createApiKey(owner, { scopes: ["projects:read"] });
    const list = (key: string, orgId = org.id) => request("GET", `/v1/orgs/${orgId}/audit-streams`, { key });
    for (const caller of [owner, admin, reader]) expect((await list(caller.key)).status).toBe(200);
    expectError(await list(member.key), 403, "unauthorized");
    expectError(await list(restricted.key), 403, "unauthorized");
    expectError(await list(noScope.key), 403, "forbidden");
    const { org: stranger } = await createOrgWithOwner();
    expectError(await list(owner.key, stranger.id), 404, "not_found");
  });

  runCommonRouteTests("GET /v1/orgs/{org_id}/audit-streams", async () => {
    const { org, owner } = await createOrgWithOwner();
    return { method: "GET", path: `/v1/orgs/${org.id}/audit-streams`, caller: owner };
  });
});
