import { describe, expect, it } from "vitest";
import type { MemberRecord } from "../src/schemas/member";
import { internalOk, request } from "./helpers/api";
import {
  type Account,
  addProjectMember,
  type Caller,
  createAccount,
  createCaller,
  createOrgWithOwner,
  createProject,
  type Org,
  type Project,
} from "./helpers/factories";
import { runCommonRouteTests } from "./helpers/security";

type Member = MemberRecord;
type MemberPage = { data: Member[]; has_more: boolean; next_page?: string };
type ErrorBody = { code: string; message: string; cause?: Array<{ path: string; message: string }> };

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NOWHERE = "0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c";

/** An account that belongs to `org` (no API key: it only needs to be addable). */
async function orgAccount(org: Org, fields: Record<string, unknown> = {}): Promise<Account> {
  const account = await createAccount(fields);
  await internalOk("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "member" });
  return account;
}

async function setup(): Promise<{ org: Org; owner: Caller; project: Project }> {
  const { org, owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  return { org, owner, project };
}

const membersPath = (projectId: string, accountId?: string) =>
  `/v1/projects/${projectId}/members${accountId ? `/${accountId}` : ""}`;

async function listAll(caller: Caller, projectId: string, query = ""): Promise<Member[]> {
  const res = await request<MemberPage>("GET", `${membersPath(projectId)}?limit=240${query}`, {
    key: caller.key,
  });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("POST /v1/projects/{id}/members", () => {
  it("adds accounts in request order with the default role viewer, joining account and org role", async () => {
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
    const account = await orgAccount(org);
    const add = () =>
      request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    const statuses = (await Promise.all([add(), add()])).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409]);
    expect(await listAll(owner, project.id)).toHaveLength(2);
  });

  it("needs the project role owner: a contributor is 403 forbidden; an org admin may", async () => {
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
    const account = await orgAccount(org);
    return {
      method: "POST",
      path: membersPath(project.id),
      body: { account_ids: [account.id] },
      caller: owner,
    };
  });
});

describe("GET /v1/projects/{id}/members", () => {
  it("lists the creator as the first owner", async () => {
    const { owner, project } = await setup();
    const res = await request<MemberPage>("GET", membersPath(project.id), { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect("next_page" in res.body).toBe(false);
    expect(res.body.data).toEqual([
      expect.objectContaining({ account_id: owner.accountId, role: "owner", org_role: "owner" }),
    ]);
  });

  it("walks a role-filtered list page by page in both orders; the cursor is bound to the filter", async () => {
    const { org, owner, project } = await setup();
    const viewers: string[] = [];
    for (let i = 0; i < 5; i++) {
      const account = await orgAccount(org);
      // One add per account gives distinct creation times; one add of two shares one.
      await request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
      viewers.push(account.id);
    }
    const pair = [await orgAccount(org), await orgAccount(org)];
    await request("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: pair.map((a) => a.id) },
    });
    viewers.push(...pair.map((a) => a.id));
    const contributor = await orgAccount(org);
    await request("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [contributor.id], role: "contributor" },
    });

    for (const sort of ["created_at", "-created_at"]) {
      const seen: Member[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const query = `role=viewer&limit=2&sort_by=${sort}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
        const res = await request<MemberPage>("GET", `${membersPath(project.id)}?${query}`, {
          key: owner.key,
        });
        expect(res.status).toBe(200);
        seen.push(...res.body.data);
        after = res.body.has_more ? res.body.next_page : undefined;
        if (res.body.has_more) expect(res.body.next_page).toMatch(/^[a-zA-Z0-9+/=]+$/);
        pages++;
      } while (after);
      expect(pages).toBe(4);
      expect(seen.every((m) => m.role === "viewer")).toBe(true);
      expect(new Set(seen.map((m) => m.account_id))).toEqual(new Set(viewers));
      expect(seen).toHaveLength(viewers.length);
      const keys = seen.map((m) => `${m.created_at}|${m.membership_id}`);
      const sorted = [...keys].sort();
      expect(keys).toEqual(sort === "created_at" ? sorted : sorted.reverse());
    }

    const first = await request<MemberPage>("GET", `${membersPath(project.id)}?role=viewer&limit=2`, {
      key: owner.key,
    });
    const cursor = encodeURIComponent(first.body.next_page ?? "");
    for (const query of [
      `role=contributor&after=${cursor}`,
      `after=${cursor}`,
      `role=viewer&sort_by=created_at&after=${cursor}`,
    ]) {
      const res = await request<ErrorBody>("GET", `${membersPath(project.id)}?${query}`, { key: owner.key });
      expect([res.status, res.body.code], query).toEqual([400, "bad_input"]);
    }
    const owners = await listAll(owner, project.id, "&role=owner");
    expect(owners.map((m) => m.account_id)).toEqual([owner.accountId]);
    const contributors = await listAll(owner, project.id, "&role=contributor");
    expect(contributors.map((m) => m.account_id)).toEqual([contributor.id]);
  });

  it("refuses a bad role filter, limit or cursor", async () => {
    const { owner, project } = await setup();
    for (const query of ["role=admin", "limit=0", "limit=241", "sort_by=name", "after=%25%25"]) {
      const res = await request<ErrorBody>("GET", `${membersPath(project.id)}?${query}`, { key: owner.key });
      expect([res.status, res.body.code], query).toEqual([400, "bad_input"]);
    }
  });

  it("a project viewer may list; an org member outside the project sees 404", async () => {
    const { org, owner, project } = await setup();
    const viewer = await createCaller(org, "member", owner);
    const outsider = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    expect((await listAll(viewer, project.id)).length).toBe(2);
    const res = await request<ErrorBody>("GET", membersPath(project.id), { key: outsider.key });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests("GET /v1/projects/{id}/members", async () => {
    const { owner, project } = await setup();
    return { method: "GET", path: membersPath(project.id), caller: owner };
  });
});

describe("GET /v1/projects/{id}/members/{member_id}", () => {
  it("reads a member; a non-member account or an unknown ID is 404, a malformed one 400", async () => {
    const { org, owner, project } = await setup();
    const res = await request<Member>("GET", membersPath(project.id, owner.accountId), { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ account_id: owner.accountId, project_id: project.id, role: "owner" });
    const stranger = await orgAccount(org);
    for (const id of [stranger.id, NOWHERE]) {
      const missing = await request<ErrorBody>("GET", membersPath(project.id, id), { key: owner.key });
      expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    }
    const bad = await request<ErrorBody>("GET", membersPath(project.id, "x"), { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  it("a member of another project is not a member of this one", async () => {
    const { owner, project } = await setup();
    const other = await createProject(owner);
    const res = await request<ErrorBody>("GET", membersPath(other.id, owner.accountId), { key: owner.key });
    expect(res.status).toBe(200);
    await request("DELETE", `/v1/projects/${other.id}`, { key: owner.key });
    const gone = await request<ErrorBody>("GET", membersPath(other.id, owner.accountId), { key: owner.key });
    expect(gone.status).toBe(404);
    expect((await request("GET", membersPath(project.id, owner.accountId), { key: owner.key })).status).toBe(
      200,
    );
  });

  runCommonRouteTests("GET /v1/projects/{id}/members/{member_id}", async () => {
    const { owner, project } = await setup();
    return { method: "GET", path: membersPath(project.id, owner.accountId), caller: owner };
  });
});

describe("PUT /v1/projects/{id}/members/{member_id}", () => {
  it("replaces the role and answers the member", async () => {
    const { org, owner, project } = await setup();
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

  it("refuses bad bodies and unknown members, changing nothing", async () => {
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
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
    const { org, owner, project } = await setup();
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const res = await request<ErrorBody>("PUT", membersPath(project.id, viewer.accountId), {
      key: viewer.key,
      body: { role: "owner" },
    });
    expect([res.status, res.body.code]).toEqual([403, "forbidden"]);
  });

  runCommonRouteTests("PUT /v1/projects/{id}/members/{member_id}", async () => {
    const { owner, project } = await setup();
    return {
      method: "PUT",
      path: membersPath(project.id, owner.accountId),
      body: { role: "owner" },
      caller: owner,
    };
  });
});

describe("DELETE /v1/projects/{id}/members/{member_id}", () => {
  it("removes a member (204, empty body); it is then 404", async () => {
    const { org, owner, project } = await setup();
    const account = await orgAccount(org);
    await request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    const res = await request("DELETE", membersPath(project.id, account.id), { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    expect((await request("GET", membersPath(project.id, account.id), { key: owner.key })).status).toBe(404);
    const again = await request<ErrorBody>("DELETE", membersPath(project.id, account.id), { key: owner.key });
    expect([again.status, again.body.code]).toEqual([404, "not_found"]);
  });

  it("removing the last owner is 409 and keeps it", async () => {
    const { owner, project } = await setup();
    const res = await request<ErrorBody>("DELETE", membersPath(project.id, owner.accountId), {
      key: owner.key,
    });
    expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    expect((await listAll(owner, project.id)).map((m) => m.role)).toEqual(["owner"]);
  });

  it("two owners removed at once: exactly one removal succeeds, one owner remains", async () => {
    const { org, owner, project } = await setup();
    const second = await orgAccount(org);
    await request("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [second.id], role: "owner" },
    });
    // The org owner acts as project owner even after losing its membership, so it can send both.
    const [a, b] = await Promise.all([
      request("DELETE", membersPath(project.id, owner.accountId), { key: owner.key }),
      request("DELETE", membersPath(project.id, second.id), { key: owner.key }),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    const owners = await listAll(owner, project.id, "&role=owner");
    expect(owners).toHaveLength(1);
  });

  it("a contributor may not remove members (403 forbidden)", async () => {
    const { org, owner, project } = await setup();
    const contributor = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, contributor, "contributor");
    const res = await request<ErrorBody>("DELETE", membersPath(project.id, contributor.accountId), {
      key: contributor.key,
    });
    expect([res.status, res.body.code]).toEqual([403, "forbidden"]);
  });

  runCommonRouteTests("DELETE /v1/projects/{id}/members/{member_id}", async () => {
    const { org, owner, project } = await setup();
    const account = await orgAccount(org);
    await request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    return { method: "DELETE", path: membersPath(project.id, account.id), caller: owner };
  });
});
