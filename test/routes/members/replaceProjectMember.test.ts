/** replaceProjectMember. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import {
  addProjectMember,
  createCaller,
  createOrgWithOwner,
  createOwnedProject,
  createProject,
} from "../../helpers/factories";
import { listAll, type Member, membersPath, orgAccount } from "../../helpers/members";
import { runCommonRouteTests } from "../../helpers/security";

describe("PUT /v1/projects/{id}/members/{member_id}", () => {
  it("replaces the role and answers the member", async () => {
    const { org, owner, project } = await createOwnedProject();
    const account = await orgAccount(org);
    await request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    const res = await request<Member>("PUT", membersPath(project.id, account.id), {
      key: owner.key,
      body: { role: "contributor" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ account_id: account.id, role: "contributor", org_role: "member" });
    const read = await request<Member>("GET", membersPath(project.id, account.id), { key: owner.key });
    expect(read.body).toEqual(res.body);
  });

  it("records {role: {from, to}} in the audit log, and null changes when the role stays (§14)", async () => {
    const { org, owner, project } = await createOwnedProject();
    const account = await orgAccount(org);
    await request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    for (const role of ["contributor", "contributor"]) {
      const res = await request("PUT", membersPath(project.id, account.id), {
        key: owner.key,
        body: { role },
      });
      expect(res.status, res.raw).toBe(200);
    }
    const log = await request<{ data: { changes: unknown }[] }>(
      "GET",
      `/v1/projects/${project.id}/audit-log?action=replaceProjectMember`,
      { key: owner.key },
    );
    expect(log.body.data.map((e) => e.changes)).toEqual([
      null,
      { role: { from: "viewer", to: "contributor" } },
    ]);
  });

  it("refuses bad bodies and unknown members, changing nothing", async () => {
    const { org, owner, project } = await createOwnedProject();
    for (const body of [{}, { role: "admin" }, { role: "viewer", extra: 1 }]) {
      const res = await request<ErrorBody>("PUT", membersPath(project.id, owner.accountId), {
        key: owner.key,
        body,
      });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    }
    const stranger = await orgAccount(org);
    const missing = await request<ErrorBody>("PUT", membersPath(project.id, stranger.id), {
      key: owner.key,
      body: { role: "viewer" },
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    expect((await listAll(owner, project.id)).map((m) => m.role)).toEqual(["owner"]);
  });

  it("demoting the last owner is 409; with a second owner it works; re-stating owner is fine", async () => {
    const { org, owner, project } = await createOwnedProject();
    const same = await request<Member>("PUT", membersPath(project.id, owner.accountId), {
      key: owner.key,
      body: { role: "owner" },
    });
    expect(same.status).toBe(200);
    const refused = await request<ErrorBody>("PUT", membersPath(project.id, owner.accountId), {
      key: owner.key,
      body: { role: "contributor" },
    });
    expect([refused.status, refused.body.code]).toEqual([409, "conflict"]);
    const second = await orgAccount(org);
    await request("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [second.id], role: "owner" },
    });
    const ok = await request<Member>("PUT", membersPath(project.id, owner.accountId), {
      key: owner.key,
      body: { role: "viewer" },
    });
    expect([ok.status, ok.body.role]).toEqual([200, "viewer"]);
  });

  it("two owners demoting each other at once: exactly one succeeds, one owner remains", async () => {
    const { org, owner, project } = await createOwnedProject();
    const second = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, second, "owner");
    const [a, b] = await Promise.all([
      request("PUT", membersPath(project.id, owner.accountId), { key: second.key, body: { role: "viewer" } }),
      request("PUT", membersPath(project.id, second.accountId), { key: owner.key, body: { role: "viewer" } }),
    ]);
    // The loser is 409 (the last-owner guard) when both checked their rights before either
    // wrote, or 403 when its check already saw its own demotion: what it would get a moment
    // later (API_CONTRACT §17). Which one depends only on how the two interleave.
    const [winner, loser] = [a.status, b.status].sort();
    expect(winner).toBe(200);
    expect([403, 409]).toContain(loser);
    expect(await listAll(owner, project.id, "&role=owner")).toHaveLength(1);
  });

  it("a viewer may not change roles (403 forbidden)", async () => {
    const { org, owner, project } = await createOwnedProject();
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const res = await request<ErrorBody>("PUT", membersPath(project.id, viewer.accountId), {
      key: viewer.key,
      body: { role: "owner" },
    });
    expect([res.status, res.body.code]).toEqual([403, "forbidden"]);
  });

  runCommonRouteTests("PUT /v1/projects/{id}/members/{member_id}", async () => {
    const { owner, project } = await createOwnedProject();
    return {
      method: "PUT",
      path: membersPath(project.id, owner.accountId),
      body: { role: "owner" },
      caller: owner,
    };
  });
});

describe("a PUT carries the full representation (SPEC.md)", () => {
  type Body = Record<string, unknown>;

  it("accepts the member record as read with a new role; a mismatched account_id is 400", async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    const project = await createProject(owner);
    await addProjectMember(owner, project.id, member, "viewer");
    const path = `/v1/projects/${project.id}/members/${member.accountId}`;
    const read = (await request<Body>("GET", path, { key: owner.key })).body;
    const res = await request<Body>("PUT", path, { key: owner.key, body: { ...read, role: "contributor" } });
    expect([res.status, res.body.role]).toEqual([200, "contributor"]);
    // The account's fields are read-only here: sent back in any form, they are ignored.
    const loose = await request<Body>("PUT", path, {
      key: owner.key,
      body: { ...read, role: "contributor", profile: {}, created_at: "2026-11-23T09:02:29Z", avatar: 7 },
    });
    expect([loose.status, loose.body.profile], loose.raw).toEqual([200, read.profile]);
    const wrong = await request<ErrorBody>("PUT", path, {
      key: owner.key,
      body: { ...read, role: "owner", account_id: owner.accountId },
    });
    expect([wrong.status, wrong.body.cause?.map((c) => c.path)]).toEqual([400, ["account_id"]]);
    expect((await request<Body>("GET", path, { key: owner.key })).body.role).toBe("contributor");
  });
});
