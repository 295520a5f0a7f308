/** internalCreateComponent: POST /internal/v1/environments/{environment_id}/components (API_CONTRACT §9). */
import { describe, expect, it } from "vitest";
import { internal } from "../../../helpers/api";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../../helpers/expect";
import {
  createEnvironment,
  createOrgWithOwner,
  createOwnedProject,
  createProject,
} from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/environments/{environment_id}/components", () => {
  it("creates a component; names are free (repeats included); unknown environment 404", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const staging = await createEnvironment(project.id);
    const res = await internal("POST", `/environments/${project.default_environment_id}/components`, {
      name: "web",
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      environment_id: project.default_environment_id,
      name: "web",
      created_at: expect.stringMatching(TS),
    });
    const again = await internal("POST", `/environments/${project.default_environment_id}/components`, {
      name: "web",
    });
    expect(again.status).toBe(201);
    expect((await internal("POST", `/environments/${staging.id}/components`, { name: "web" })).status).toBe(
      201,
    );
    expectError(
      await internal("POST", `/environments/${UNKNOWN_ID}/components`, { name: "web" }),
      404,
      "not_found",
    );
    expectError(await internal("POST", "/environments/bad!/components", { name: "web" }), 400, "bad_input");
  });

  runInternalRouteTests("POST /internal/v1/environments/{environment_id}/components", async () => {
    const { project } = await createOwnedProject();
    return {
      method: "POST",
      path: `/internal/v1/environments/${project.default_environment_id}/components`,
      body: { name: "web" },
    };
  });
});
