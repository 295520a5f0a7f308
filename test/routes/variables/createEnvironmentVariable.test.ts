/** createEnvironmentVariable: POST /v1/environments/{environment_id}/variables, and names unique per environment. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createEnvironment, createOrgWithOwner, createProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import {
  componentPath,
  createRoute,
  createVariable,
  environmentPath,
  expectCreateRefused,
  expectOneOfConcurrentCreates,
  INVALID_BODIES,
  setup,
  type VariableBody,
} from "../../helpers/variables";

const LONE = "\uD800";

describe("POST /v1/environments/{id}/variables", () => {
  it("creates an environment variable with component_id null and `_` in its resource_id", async () => {
    const { owner, project, environmentId } = await setup();
    const res = await request<VariableBody>("POST", environmentPath(environmentId), {
      key: owner.key,
      body: { name: "LOG_LEVEL", type: "string", value: "debug" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      environment_id: environmentId,
      component_id: null,
      resource_id: `/${project.id}/${environmentId}/_/LOG_LEVEL`,
    });
    expect(res.raw).not.toContain("debug");
  });

  it.each(INVALID_BODIES)("refuses %j with bad_input naming %s, and creates nothing", async (body, field) => {
    const { owner, environmentId } = await setup();
    await expectCreateRefused(owner, environmentPath(environmentId), body, field);
  });

  it("accepts names of 255 characters, underscores and digits after the first character", async () => {
    const { owner, environmentId } = await setup();
    for (const name of ["_", "_9", "a1_B2", `A${"b".repeat(254)}`]) {
      const res = await request("POST", environmentPath(environmentId), {
        key: owner.key,
        body: { name, type: "string", value: "" },
      });
      expect(res.status).toBe(201);
    }
  });

  it("an unknown environment is 404", async () => {
    const { owner } = await setup();
    const body = { name: "A", type: "string", value: "x" };
    const missing = await request<ErrorBody>("POST", environmentPath("a".repeat(32)), {
      key: owner.key,
      body,
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  it("refuses an unpaired surrogate in a variable value", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const env = await createEnvironment(project.id);
    const res = await request("POST", `/v1/environments/${env.id}/variables`, {
      key: owner.key,
      body: { name: "V", type: "secret", value: `abc${LONE}` },
    });
    expect(res.status, res.raw).toBe(400);
    expect(res.body).toMatchObject({ code: "bad_input", cause: [{ path: "value" }] });
  });

  runCommonRouteTests(
    "POST /v1/environments/{id}/variables",
    createRoute((w) => environmentPath(w.environmentId)),
  );
});

describe("names are unique per scope", () => {
  it("409 on a clash in the same environment; other environments and components are free", async () => {
    const { owner, project, environmentId, componentId } = await setup();
    const otherEnv = await createEnvironment(project.id);
    await createVariable(owner, componentPath(componentId), { name: "API_KEY", value: "first-value" });
    await createVariable(owner, environmentPath(environmentId), { name: "API_KEY" });
    await createVariable(owner, environmentPath(otherEnv.id), { name: "API_KEY" });
    const envDup = await request<ErrorBody>("POST", environmentPath(environmentId), {
      key: owner.key,
      body: { name: "API_KEY", type: "secret", value: "x" },
    });
    expect([envDup.status, envDup.body.code]).toEqual([409, "conflict"]);
  });

  it("of concurrent creates of one name, exactly one wins and the others are 409, never 500", async () => {
    const { owner, environmentId } = await setup();
    await expectOneOfConcurrentCreates(owner, environmentPath(environmentId));
  });
});
