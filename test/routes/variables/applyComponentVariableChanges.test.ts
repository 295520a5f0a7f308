/**
 * applyComponentVariableChanges: PATCH /v1/components/{component_id}/variables (API_CONTRACT §18).
 * The rules both scopes share are tested under the environment (applyEnvironmentVariableChanges.test.ts);
 * here, that a component is a scope of its own with its own versions.
 */
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { createComponent } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, applyChanges, scopeState, setsWorld, versionNumbers } from "../../helpers/variable-sets";
import { componentPath, createVariable } from "../../helpers/variables";

describe("PATCH /v1/components/{id}/variables", () => {
  it("changes the component's own variables, with versions of its own, recorded against the component", async () => {
    const { owner, paths, componentId, environmentId } = await setsWorld();
    await createVariable(owner, paths.environment, { name: "API_URL", type: "string", value: "env" });
    const sibling = componentPath((await createComponent(environmentId)).id);
    await createVariable(owner, sibling, { name: "API_URL", type: "string", value: "sibling" });
    await createVariable(owner, paths.component, { name: "OLD", type: "secret", value: "o" });
    const res = await applyChanges(
      owner,
      paths.component,
      { dotenv: "API_URL=https://component\nWORKERS='4'\n", type: "string", mode: "replace" },
      { "x-request-id": `component-change-${componentId}` },
    );
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({
      version: 2,
      dry_run: false,
      changes: [
        { name: "API_URL", action: "created", type: { from: null, to: "string" }, value_changed: true },
        { name: "OLD", action: "deleted", type: { from: "secret", to: null }, value_changed: true },
        { name: "WORKERS", action: "created", type: { from: null, to: "string" }, value_changed: true },
      ],
    });
    expect(await scopeState(owner, paths.component)).toEqual({
      API_URL: ["string", "https://component"],
      WORKERS: ["string", "4"],
    });
    expect(await scopeState(owner, paths.environment)).toEqual({ API_URL: ["string", "env"] });
    expect(await scopeState(owner, sibling)).toEqual({ API_URL: ["string", "sibling"] });
    expect(await versionNumbers(owner, paths.component)).toEqual([1, 2]);
    expect(await versionNumbers(owner, paths.environment)).toEqual([1]);
    const [entry] = await rowsOf(`component-change-${componentId}`);
    expect(entry).toMatchObject({
      action: "applyComponentVariableChanges",
      target_type: "component",
      target_id: componentId,
    });
  });

  it("refuses with the same cause paths and changes nothing; an unknown component is 404", async () => {
    const { owner, paths } = await setsWorld();
    expectError(
      await applyChanges(owner, paths.component, { variables: { A: { type: "secret", value: 1 } } }),
      400,
      "bad_input",
      "variables.A.value",
    );
    expectError(
      await applyChanges(owner, paths.component, { dotenv: "A=1\nnot an entry" }),
      400,
      "bad_input",
      "dotenv.line.2",
    );
    expectError(
      await applyChanges(owner, paths.component, { variables: { A: null } }),
      400,
      "bad_input",
      "variables.A",
    );
    await applied(owner, paths.component, { variables: { A: { type: "string", value: "a" } } });
    expectError(
      await applyChanges(owner, paths.component, { variables: { A: null }, base_version: 0 }),
      409,
      "conflict",
      "base_version",
    );
    expect(await versionNumbers(owner, paths.component)).toEqual([1]);
    expectError(
      await applyChanges(owner, componentPath("1111111111111111111111"), { variables: { A: null } }),
      404,
      "not_found",
    );
  });

  runCommonRouteTests("PATCH /v1/components/{id}/variables", async () => {
    const world = await setsWorld();
    return {
      method: "PATCH",
      path: world.paths.component,
      body: { variables: { A: { type: "string", value: "a" } } },
      caller: world.owner,
    };
  });
});
