/** addProjectMembers. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { type ErrorBody, TS } from "../../helpers/expect";
import {
  addProjectMember,
  createCaller,
  createOrgWithOwner,
  createOwnedProject,
  createProject,
} from "../../helpers/factories";
import { listAll, type Member, membersPath, NOWHERE, orgAccount } from "../../helpers/members";
import { runCommonRouteTests } from "../../helpers/security";

describe("POST /v1/projects/{id}/members", () => {
  it("adds accounts in request order with the default role viewer, joining account and org role", async () => {
    const { org, owner, project } = await createOwnedProject();
    const rich = await orgAccount(org, {
      name: "ada",
      display_name: "Ada L.",
      avatar: "https://example.com/ada.png",
      profile: { bio: "engines", github: "ada" },
    });
    const plain = await orgAccount(org, { name: "bob" });
    const admin = await createCaller(org, "admin");
    const res = await request<{ data: Member[] }>("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [plain.id, admin.accountId, rich.id] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.map((m) => m.account_id)).toEqual([plain.id, admin.accountId, rich.id]);
    const [bob, adminMember, ada] = res.body.data;
    expect(ada).toEqual({
      account_id: rich.id,
      membership_id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      project_id: project.id,
      name: "ada",
      display_name: "Ada L.",
      avatar: "https://example.com/ada.png",
      org_role: "member",
      role: "viewer",
      profile: { bio: "engines", github: "ada", location: null, twitter: null, website: null },
      created_at: expect.stringMatching(TS),
    });
    expect(bob).toMatchObject({ name: "bob", display_name: "bob", avatar: null, role: "viewer" });
    expect(bob?.profile).toEqual({ bio: null, github: null, location: null, twitter: null, website: null });
    expect(adminMember?.org_role).toBe("admin");
    const got = await request<Member>("GET", membersPath(project.id, rich.id), { key: owner.key });
    expect(got.body).toEqual(ada);
  });

  it("gives every added account the requested role", async () => {
    const { org, owner, project } = await createOwnedProject();
    const a = await orgAccount(org);
    const b = await orgAccount(org);
    const res = await request<{ data: Member[] }>("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [a.id, b.id], role: "contributor" },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.map((m) => m.role)).toEqual(["contributor", "contributor"]);
  });

  it("accepts 100 accounts in one request", async () => {
    const { org, owner, project } = await createOwnedProject();
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push((await orgAccount(org)).id);
    const res = await request<{ data: Member[] }>("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: ids },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.map((m) => m.account_id)).toEqual(ids);
    expect(await listAll(owner, project.id)).toHaveLength(101);
  });

  it("refuses 101 IDs, duplicates, an empty list, malformed IDs, unknown fields and roles; writes nothing", async () => {
    const { org, owner, project } = await createOwnedProject();
    const account = await orgAccount(org);
    const many = Array.from({ length: 101 }, () => account.id);
    const cases: Array<[unknown, string]> = [
      [{ account_ids: many }, "account_ids"],
      [{ account_ids: [account.id, account.id] }, "account_ids.1"],
      [{ account_ids: [] }, "account_ids"],
      [{ account_ids: ["nope!"] }, "account_ids.0"],
      [{ account_ids: [account.id], role: "admin" }, "role"],
      [{ account_ids: [account.id], extra: true }, "extra"],
      [{}, "account_ids"],
    ];
    for (const [body, path] of cases) {
      const res = await request<ErrorBody>("POST", membersPath(project.id), { key: owner.key, body });
      expect([res.status, res.body.code], JSON.stringify(body).slice(0, 80)).toEqual([400, "bad_input"]);
      expect(res.body.cause?.map((c) => c.path)).toContain(path);
    }
    expect((await listAll(owner, project.id)).map((m) => m.account_id)).toEqual([owner.accountId]);
  });

  it("accounts outside the organization (or unknown) are 400 naming them; nothing is added", async () => {
    const { org, owner, project } = await createOwnedProject();
    const inside = await orgAccount(org);
    const other = await createOrgWithOwner();
    const foreign = await orgAccount(other.org);
    const res = await request<ErrorBody>("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [inside.id, foreign.id, NOWHERE] },
    });
    expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    expect(res.body.cause?.map((c) => c.path)).toEqual(["account_ids.1", "account_ids.2"]);
    expect(res.body.cause?.[0]?.message).toContain(foreign.id);
    expect(res.body.cause?.[1]?.message).toContain(NOWHERE);
    expect((await listAll(owner, project.id)).map((m) => m.account_id)).toEqual([owner.accountId]);
  });

  it("any account that is already a member makes the whole request 409; nothing is added", async () => {
    const { org, owner, project } = await createOwnedProject();
    const fresh = await orgAccount(org);
    const res = await request<ErrorBody>("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [fresh.id, owner.accountId] },
    });
    expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    expect(res.body.cause?.[0]?.message).toContain(owner.accountId);
    expect((await listAll(owner, project.id)).map((m) => m.account_id)).toEqual([owner.accountId]);
  });

  it("two racing adds of the same account: one 201, one 409, one membership", async () => {
    const { org, owner, project } = await createOwnedProject();
    const account = await orgAccount(org);
    const add = () =>
      request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    const statuses = (await Promise.all([add(), add()])).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409]);
    expect(await listAll(owner, project.id)).toHaveLength(2);
  });

  it("needs the project role owner: a contributor is 403 forbidden; an org admin may", async () => {
    const { org, owner, project } = await createOwnedProject();
    const contributor = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, contributor, "contributor");
    const target = await orgAccount(org);
    const refused = await request<ErrorBody>("POST", membersPath(project.id), {
      key: contributor.key,
      body: { account_ids: [target.id] },
    });
    expect([refused.status, refused.body.code]).toEqual([403, "forbidden"]);
    const admin = await createCaller(org, "admin");
    const ok = await request("POST", membersPath(project.id), {
      key: admin.key,
      body: { account_ids: [target.id] },
    });
    expect(ok.status).toBe(201);
  });

  runCommonRouteTests("POST /v1/projects/{id}/members", async () => {
    const { org, owner, project } = await createOwnedProject();
    const account = await orgAccount(org);
    return {
      method: "POST",
      path: membersPath(project.id),
      body: { account_ids: [account.id] },
      caller: owner,
    };
  });
});

describe("null is not given", () => {
  it("a member added with role null is a viewer", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const account = await orgAccount(org);
    const res = await request<{ data: { role: string }[] }>("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [account.id], role: null },
    });
    expect([res.status, res.body.data?.[0]?.role], res.raw).toEqual([201, "viewer"]);
  });
});
