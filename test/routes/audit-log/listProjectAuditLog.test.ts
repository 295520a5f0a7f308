/** listProjectAuditLog: GET /v1/projects/{project_id}/audit-log, a project's audit log (API_CONTRACT §14). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { auditWorld, type AuditList as List } from "../../helpers/audit-log";
import type { ErrorBody } from "../../helpers/expect";
import { createOwnedProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/projects/{project_id}/audit-log", () => {
  it("project list: the project's entries, for its owner (a contributor is 403 forbidden)", async () => {
    const { owner, member, a, b } = await auditWorld();
    const res = await request<List>("GET", `/v1/projects/${a.id}/audit-log`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBe(4); // createProject, addProjectMembers, createEnvironmentVariable, revealVariable
    expect(res.body.data.every((e) => e.project_id === a.id)).toBe(true);
    const filtered = await request<List>("GET", `/v1/projects/${a.id}/audit-log?action=revealVariable`, {
      key: owner.key,
    });
    expect(filtered.body.data.map((e) => e.action)).toEqual(["revealVariable"]);
    const refused = await request<ErrorBody>("GET", `/v1/projects/${a.id}/audit-log`, { key: member.key });
    expect([refused.status, refused.body.code]).toEqual([403, "forbidden"]);
    expect((await request("GET", `/v1/projects/${b.id}/audit-log`, { key: member.key })).status).toBe(404);
  });

  it("a cursor is bound to its project (§4): another project's, or the whole organization's, is 400", async () => {
    const { owner, a, b } = await auditWorld();
    const list = (path: string) => request<List & ErrorBody>("GET", path, { key: owner.key });
    for (const query of ["?limit=1", "?after_sequence=0&limit=1"]) {
      const first = await list(`/v1/projects/${a.id}/audit-log${query}`);
      const after = `${query}&after=${encodeURIComponent(first.body.next_page ?? "")}`;
      expect((await list(`/v1/projects/${a.id}/audit-log${after}`)).status).toBe(200);
      // The organization's list filtered to the project is the same list.
      expect((await list(`/v1/orgs/${owner.orgId}/audit-log${after}&project_id=${a.id}`)).status).toBe(200);
      for (const other of [
        `/v1/projects/${b.id}/audit-log${after}`,
        `/v1/orgs/${owner.orgId}/audit-log${after}`,
      ]) {
        const res = await list(other);
        expect([res.status, res.body.code, res.body.cause?.[0]?.path], other).toEqual([
          400,
          "bad_input",
          "after",
        ]);
      }
      const unfiltered = await list(`/v1/orgs/${owner.orgId}/audit-log${query}`);
      const orgCursor = `${query}&after=${encodeURIComponent(unfiltered.body.next_page ?? "")}`;
      expect((await list(`/v1/projects/${a.id}/audit-log${orgCursor}`)).status, query).toBe(400);
    }
  });

  runCommonRouteTests("GET /v1/projects/{project_id}/audit-log", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: `/v1/projects/${project.id}/audit-log`, caller: owner };
  });
});
