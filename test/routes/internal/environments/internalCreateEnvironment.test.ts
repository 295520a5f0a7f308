/** internalCreateEnvironment: POST /internal/v1/projects/{project_id}/environments (API_CONTRACT §9). */
import { describe, expect, it } from "vitest";
import { internal, request } from "../../../helpers/api";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../../helpers/expect";
import { createOrgWithOwner, createOwnedProject, createProject } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/projects/{project_id}/environments", () => {
  it("creates an environment; names are free, a project's `production` and repeats included", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const other = await createProject(owner);
    const res = await internal("POST", `/projects/${project.id}/environments`, { name: "staging" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      project_id: project.id,
      name: "staging",
      created_at: expect.stringMatching(TS),
    });
    // No document makes names unique: a second `staging`, and a `production` beside the first.
    for (const name of ["staging", "production"]) {
      const again = await internal<{ id: string; name: string }>(
        "POST",
        `/projects/${project.id}/environments`,
        {
          name,
        },
      );
      expect([again.status, again.body.name]).toEqual([201, name]);
      expect(again.body.id).not.toBe(res.body.id);
    }
    expect((await internal("POST", `/projects/${other.id}/environments`, { name: "staging" })).status).toBe(
      201,
    );
  });

  it("unknown or deleted project 404; bad bodies 400", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    expectError(
      await internal("POST", `/projects/${UNKNOWN_ID}/environments`, { name: "x" }),
      404,
      "not_found",
    );
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    expectError(
      await internal("POST", `/projects/${project.id}/environments`, { name: "x" }),
      404,
      "not_found",
    );
    for (const body of [{}, { name: null }, { name: 7 }, { name: "x", region: "eu" }]) {
      expectError(await internal("POST", `/projects/${UNKNOWN_ID}/environments`, body), 400, "bad_input");
    }
  });

  runInternalRouteTests("POST /internal/v1/projects/{project_id}/environments", async () => {
    const { project } = await createOwnedProject();
    return {
      method: "POST",
      path: `/internal/v1/projects/${project.id}/environments`,
      body: { name: "staging" },
    };
  });
});
