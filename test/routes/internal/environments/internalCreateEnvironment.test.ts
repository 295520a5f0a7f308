/** internalCreateEnvironment: POST /internal/v1/projects/{project_id}/environments (API_CONTRACT §9). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, request } from "../../../helpers/api";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../../helpers/expect";
import { createOrgWithOwner, createOwnedProject, createProject } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/projects/{project_id}/environments", () => {
  it("creates an environment; names are unique within the project regardless of case (§23), free across projects", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const other = await createProject(owner);
    const res = await internal("POST", `/projects/${project.id}/environments`, { name: "staging" });
    expect(res.status).toBe(201);
    // The §9 answer, as it was: the environment as made.
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      project_id: project.id,
      name: "staging",
      created_at: expect.stringMatching(TS),
    });
    // §23: the internal create is held to the project's names too, `production` included.
    for (const name of ["staging", "STAGING", "Production"]) {
      const again = await internal("POST", `/projects/${project.id}/environments`, { name });
      expectError(again, 409, "conflict");
      expect(again.body.cause).toEqual([{ path: "name", message: expect.any(String) }]);
    }
    const { results } = await env.DB.prepare(
      "SELECT name FROM environments WHERE project_id = ? ORDER BY name",
    )
      .bind(project.id)
      .all<{ name: string }>();
    expect(results.map((r) => r.name)).toEqual(["production", "staging"]);
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
