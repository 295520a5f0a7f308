/** listProjects: GET /v1/projects, the caller's projects across its organization. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  addProjectMember,
  createCaller,
  createOrgWithOwner,
  createOwnedProject,
  createProject,
} from "../../helpers/factories";
import type { ProjectPage } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

describe("lists", () => {
  it("GET /v1/projects: org owner and admin see all, a member only its projects", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    const p1 = await createProject(owner);
    const p2 = await createProject(owner);
    for (const caller of [owner, admin]) {
      const all = await request<ProjectPage>("GET", "/v1/projects", { key: caller.key });
      expect(all.body.data.map((p) => p.id)).toEqual([p2.id, p1.id]);
      expect(all.body.has_more).toBe(false);
      expect("next_page" in all.body).toBe(false);
    }
    const none = await request<ProjectPage>("GET", "/v1/projects", { key: member.key });
    expect(none.body).toEqual({ data: [], has_more: false });
    await addProjectMember(owner, p1.id, member, "viewer");
    const mine = await request<ProjectPage>("GET", "/v1/projects", { key: member.key });
    expect(mine.body.data).toEqual([p1]);
  });

  runCommonRouteTests(
    "GET /v1/projects",
    async () => {
      const { owner } = await createOwnedProject();
      return { method: "GET", path: "/v1/projects", caller: owner };
    },
    { otherOrgStatus: 200 },
  );
});
