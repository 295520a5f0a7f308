/** getProject. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createCaller, createOwnedProject } from "../../helpers/factories";
import { type ProjectBody, projectCaller } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/projects/{id}", () => {
  it("reads a project; ids in any accepted form, malformed ones are 400", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(project);
    for (const id of ["0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c", "a".repeat(32), "1111111111111111111111"]) {
      const missing = await request<ErrorBody>("GET", `/v1/projects/${id}`, { key: owner.key });
      expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    }
    for (const id of ["nope!", "0OIl111111111111111111", "A".repeat(32)]) {
      const bad = await request<ErrorBody>("GET", `/v1/projects/${id}`, { key: owner.key });
      expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
      expect(bad.body.cause?.map((c) => c.path)).toEqual(["project_id"]);
    }
  });

  it("visibility: org owner/admin and project members see it; other org members get 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    const admin = await createCaller(org, "admin");
    const outsider = await projectCaller(org, owner, project, null);
    const viewer = await projectCaller(org, owner, project, "viewer");
    const contributor = await projectCaller(org, owner, project, "contributor");
    for (const caller of [owner, admin, viewer, contributor]) {
      const res = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: caller.key });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(project.id);
    }
    const hidden = await request<ErrorBody>("GET", `/v1/projects/${project.id}`, { key: outsider.key });
    expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests("GET /v1/projects/{id}", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: `/v1/projects/${project.id}`, caller: owner };
  });
});
