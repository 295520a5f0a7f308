/** listProjectMembers. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { addProjectMember, createCaller, createOwnedProject } from "../../helpers/factories";
import { listAll, type Member, type MemberPage, membersPath, orgAccount } from "../../helpers/members";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/projects/{id}/members", () => {
  it("lists the creator as the first owner", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<MemberPage>("GET", membersPath(project.id), { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect("next_page" in res.body).toBe(false);
    expect(res.body.data).toEqual([
      expect.objectContaining({ account_id: owner.accountId, role: "owner", org_role: "owner" }),
    ]);
  });

  it("walks a role-filtered list page by page in both orders; the cursor is bound to the filter", async () => {
    const { org, owner, project } = await createOwnedProject();
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
    const { owner, project } = await createOwnedProject();
    for (const query of ["role=admin", "limit=0", "limit=241", "sort_by=name", "after=%25%25"]) {
      const res = await request<ErrorBody>("GET", `${membersPath(project.id)}?${query}`, { key: owner.key });
      expect([res.status, res.body.code], query).toEqual([400, "bad_input"]);
    }
  });

  it("a project viewer may list; an org member outside the project sees 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    const viewer = await createCaller(org, "member", owner);
    const outsider = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    expect((await listAll(viewer, project.id)).length).toBe(2);
    const res = await request<ErrorBody>("GET", membersPath(project.id), { key: outsider.key });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests("GET /v1/projects/{id}/members", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: membersPath(project.id), caller: owner };
  });
});
