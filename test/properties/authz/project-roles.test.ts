/** Who may change a project (API_CONTRACT §5). */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createCaller, createOwnedProject, type Project, unique } from "../../helpers/factories";
import { type ProjectBody, projectCaller } from "../../helpers/projects";

describe("who may change a project", () => {
  const changes = (project: Project) =>
    [
      [
        "PUT",
        `/v1/projects/${project.id}`,
        { name: unique("p"), default_environment_id: project.default_environment_id },
      ],
      ["PATCH", `/v1/projects/${project.id}/disconnect`, undefined],
      ["DELETE", `/v1/projects/${project.id}`, undefined],
    ] as const;

  it("viewers and contributors get 403 forbidden; outsiders 404; nothing changes", async () => {
    const { org, owner, project } = await createOwnedProject();
    const viewer = await projectCaller(org, owner, project, "viewer");
    const contributor = await projectCaller(org, owner, project, "contributor");
    const outsider = await projectCaller(org, owner, project, null);
    for (const [method, path, body] of changes(project)) {
      for (const caller of [viewer, contributor]) {
        const res = await request<ErrorBody>(method, path, { key: caller.key, body });
        expect([res.status, res.body.code], `${method} ${caller.accountId}`).toEqual([403, "forbidden"]);
      }
      const hidden = await request<ErrorBody>(method, path, { key: outsider.key, body });
      expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
    }
    const unchanged = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(unchanged.body).toEqual(project);
  });

  it("a project owner who is a plain org member, and an org admin, may change it", async () => {
    for (const who of ["project_owner", "org_admin"] as const) {
      const { org, owner, project } = await createOwnedProject();
      const caller =
        who === "org_admin"
          ? await createCaller(org, "admin")
          : await projectCaller(org, owner, project, "owner");
      for (const [method, path, body] of changes(project)) {
        const res = await request(method, path, { key: caller.key, body });
        expect(res.status, `${who} ${method} ${path}`).toBe(method === "PUT" ? 200 : 204);
      }
    }
  });
});
