/** internalCreateStack: POST /internal/v1/environments/{environment_id}/stacks (API_CONTRACT §9, §17 template_id). */
import { describe, expect, it } from "vitest";
import { internal } from "../../../helpers/api";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../../helpers/expect";
import {
  createOrgWithOwner,
  createOwnedProject,
  createProject,
  createStack,
  unique,
} from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/environments/{environment_id}/stacks", () => {
  it("creates a stack; template_id is generated when missing and kept when given", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const envId = project.default_environment_id;
    const generated = await internal<{ template_id: string }>("POST", `/environments/${envId}/stacks`, {
      name: "net",
    });
    expect(generated.status).toBe(201);
    expect(generated.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      environment_id: envId,
      name: "net",
      template_id: expect.stringMatching(NEW_ID),
      created_at: expect.stringMatching(TS),
    });
    const template = "0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c";
    const given = await internal("POST", `/environments/${envId}/stacks`, {
      name: "net2",
      template_id: template,
    });
    expect(given.body).toMatchObject({ template_id: template });
    const other = await internal<{ template_id: string }>("POST", `/environments/${envId}/stacks`, {
      name: unique("s"),
    });
    expect(other.body.template_id).not.toBe(generated.body.template_id);
  });

  it("unknown environment 404; bad template_id or name 400", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    expectError(
      await internal("POST", `/environments/${UNKNOWN_ID}/stacks`, { name: "s" }),
      404,
      "not_found",
    );
    for (const [body, path] of [
      // §17: any string of 1–255 characters ("nope" is a fine template name).
      [{ name: "s", template_id: "" }, "template_id"],
      [{ name: "s", template_id: "t".repeat(256) }, "template_id"],
      [{ name: 7 }, "name"],
      [{}, "name"],
      [{ name: "s", kind: "x" }, "kind"],
    ] as const) {
      expectError(
        await internal("POST", `/environments/${project.default_environment_id}/stacks`, body),
        400,
        "bad_input",
        path,
      );
    }
  });

  it("a stack created without template_id still gets a new identifier", async () => {
    const { project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    const stack = await createStack(environmentId);
    expect(stack.template_id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
  });

  runInternalRouteTests("POST /internal/v1/environments/{environment_id}/stacks", async () => {
    const { project } = await createOwnedProject();
    return {
      method: "POST",
      path: `/internal/v1/environments/${project.default_environment_id}/stacks`,
      body: { name: unique("stack") },
    };
  });
});
