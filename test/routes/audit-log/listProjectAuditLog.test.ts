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

  runCommonRouteTests("GET /v1/projects/{project_id}/audit-log", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: `/v1/projects/${project.id}/audit-log`, caller: owner };
  });
});
