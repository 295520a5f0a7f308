/** getProjectMember. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createOwnedProject, createProject } from "../../helpers/factories";
import { type Member, membersPath, NOWHERE, orgAccount } from "../../helpers/members";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/projects/{id}/members/{member_id}", () => {
  it("reads a member; a non-member account or an unknown ID is 404, a malformed one 400", async () => {
    const { org, owner, project } = await createOwnedProject();
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
    const { owner, project } = await createOwnedProject();
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
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: membersPath(project.id, owner.accountId), caller: owner };
  });
});
