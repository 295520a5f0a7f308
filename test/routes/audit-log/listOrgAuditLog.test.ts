/** listOrgAuditLog: GET /v1/orgs/{org_id}/audit-log, an organization's audit log (API_CONTRACT §14). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { auditWorld, type AuditList as List } from "../../helpers/audit-log";
import type { ErrorBody } from "../../helpers/expect";
import { createApiKey, createOrgWithOwner } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/orgs/{org_id}/audit-log", () => {
  const orgLog = (orgId: string, key: string, query = "") =>
    request<List>("GET", `/v1/orgs/${orgId}/audit-log${query}`, { key });

  it("lists the organization's entries newest first, with actor and target", async () => {
    const { org, owner, admin, member, a, b } = await auditWorld();
    const res = await orgLog(org.id, owner.key);
    expect(res.status).toBe(200);
    const actions = res.body.data.map((e) => e.action);
    expect(actions.slice(0, 6)).toEqual([
      "revealVariable",
      "createEnvironmentVariable",
      "addProjectMembers",
      "createProject",
      "createProject",
      "internal.createApiKey",
    ]);
    const [reveal] = res.body.data;
    expect(reveal?.actor).toEqual({
      type: "api_key",
      account_id: member.accountId,
      api_key_id: member.keyId,
    });
    expect(reveal?.project_id).toBe(a.id);
    const created = res.body.data.find((e) => e.action === "createProject" && e.project_id === b.id);
    expect(created?.actor.account_id).toBe(admin.accountId);
    expect(created?.target).toEqual({ type: "project", id: b.id });
    expect(created?.changes?.name).toEqual({ from: null, to: b.name });
    const times = res.body.data.map((e) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    // The internal creation of the org and its members are the org's too.
    expect(actions).toEqual(expect.arrayContaining(["internal.createOrg", "internal.addOrgMember"]));
  });

  it("filters by project_id, action (repeatable or comma-separated) and actor_account_id", async () => {
    const { org, owner, member, a, b } = await auditWorld();
    const byProject = await orgLog(org.id, owner.key, `?project_id=${b.id}`);
    expect(byProject.body.data.map((e) => e.project_id)).toEqual([b.id]);
    const repeated = await orgLog(org.id, owner.key, "?action=revealVariable&action=createProject");
    const comma = await orgLog(org.id, owner.key, "?action=createProject,revealVariable");
    expect(repeated.body.data.map((e) => e.action).sort()).toEqual([
      "createProject",
      "createProject",
      "revealVariable",
    ]);
    expect(comma.body.data).toEqual(repeated.body.data);
    const byActor = await orgLog(org.id, owner.key, `?actor_account_id=${member.accountId}`);
    expect(byActor.body.data.map((e) => e.action)).toEqual(["revealVariable", "createEnvironmentVariable"]);
    expect(byActor.body.data.every((e) => e.project_id === a.id)).toBe(true);
    for (const bad of ["?project_id=nope", "?action=", "?action=createProject,", "?actor_account_id=1"]) {
      const res = await orgLog(org.id, owner.key, bad);
      expect(res.status, bad).toBe(400);
    }
    // An action is any name: one never recorded matches nothing. Any number of them: the set is
    // bound as one parameter (D1 binds at most 100 per statement; 150 names were a 500).
    for (const none of [
      "?action=delete-project",
      "?action=drop%20table",
      "?action=internal.create_api_key",
    ]) {
      const res = await orgLog(org.id, owner.key, none);
      expect([res.status, res.body.data], none).toEqual([200, []]);
    }
    const many = Array.from({ length: 150 }, (_, i) => `action${i}`).join(",");
    const wide = await orgLog(org.id, owner.key, `?action=${many},createProject`);
    expect(wide.status, wide.raw).toBe(200);
    expect(wide.body.data.map((e) => e.action)).toEqual(["createProject", "createProject"]);
  });

  it("pages with the shared cursor, bound to the order and the filter", async () => {
    const { org, owner } = await auditWorld();
    const all = await orgLog(org.id, owner.key, "?limit=240");
    const seen: string[] = [];
    let query = "?limit=2";
    for (let pages = 0; ; pages++) {
      expect(pages, "the walk ends within as many pages as there are entries").toBeLessThanOrEqual(
        all.body.data.length,
      );
      const page = await orgLog(org.id, owner.key, query);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((e) => e.id));
      if (!page.body.has_more) break;
      expect(page.body.next_page).toBeTruthy();
      query = `?limit=2&after=${encodeURIComponent(page.body.next_page ?? "")}`;
    }
    expect(seen).toEqual(all.body.data.map((e) => e.id));
    const filtered = await orgLog(org.id, owner.key, "?limit=1&action=createProject");
    const cursor = encodeURIComponent(filtered.body.next_page ?? "");
    expect((await orgLog(org.id, owner.key, `?limit=1&after=${cursor}`)).status).toBe(400);
    expect((await orgLog(org.id, owner.key, `?limit=1&action=createProject&after=${cursor}`)).status).toBe(
      200,
    );
    expect(
      (await orgLog(org.id, owner.key, `?limit=1&sort_by=created_at&action=createProject&after=${cursor}`))
        .status,
    ).toBe(400);
  });

  it("org list: owner and admin only (403 unauthorized), another org 404; not a key restricted to projects (§28)", async () => {
    const { org, owner, admin, member, a } = await auditWorld();
    expect((await orgLog(org.id, admin.key)).status).toBe(200);
    const refused = await request<ErrorBody>("GET", `/v1/orgs/${org.id}/audit-log`, { key: member.key });
    expect([refused.status, refused.body.code]).toEqual([403, "unauthorized"]);
    const other = await createOrgWithOwner();
    expect((await orgLog(org.id, other.owner.key)).status).toBe(404);
    // An owner's key restricted to projects acts as an org member outside them.
    const restricted = await createApiKey(owner, { project_ids: [a.id] });
    const narrowed = await request<ErrorBody>("GET", `/v1/orgs/${org.id}/audit-log`, { key: restricted.key });
    expect([narrowed.status, narrowed.body.code]).toEqual([403, "unauthorized"]);
  });

  runCommonRouteTests("GET /v1/orgs/{org_id}/audit-log", async () => {
    const { org, owner } = await createOrgWithOwner();
    return { method: "GET", path: `/v1/orgs/${org.id}/audit-log`, caller: owner };
  });
});
