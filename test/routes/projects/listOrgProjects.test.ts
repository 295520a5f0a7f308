/** listOrgProjects: GET /v1/orgs/{org_id}/projects, the projects of one organization. */

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
import type { ProjectPage } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/orgs/{org_id}/projects", () => {
  it("GET /v1/orgs/{org_id}/projects: own org only, same visibility", async () => {
    const { org, owner } = await createOrgWithOwner();
    const other = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    const project = await createProject(owner);
    await createProject(owner);
    await createProject(other.owner);
    const mine = await request<ProjectPage>("GET", `/v1/orgs/${org.id}/projects`, { key: owner.key });
    expect(mine.status).toBe(200);
    expect(mine.body.data).toHaveLength(2);
    await addProjectMember(owner, project.id, member, "contributor");
    const asMember = await request<ProjectPage>("GET", `/v1/orgs/${org.id}/projects`, { key: member.key });
    expect(asMember.body.data).toEqual([project]);
    for (const orgId of [other.org.id, "1111111111111111111111"]) {
      const theirs = await request<ErrorBody>("GET", `/v1/orgs/${orgId}/projects`, { key: owner.key });
      expect([theirs.status, theirs.body.code]).toEqual([404, "not_found"]);
    }
    const bad = await request<ErrorBody>("GET", "/v1/orgs/nope/projects", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  runCommonRouteTests("GET /v1/orgs/{org_id}/projects", async () => {
    const { org, owner } = await createOwnedProject();
    return { method: "GET", path: `/v1/orgs/${org.id}/projects`, caller: owner };
  });
});
