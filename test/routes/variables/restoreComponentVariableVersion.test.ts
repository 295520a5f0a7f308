/**
 * restoreComponentVariableVersion: POST /v1/components/{component_id}/variables/versions/{version}/restore
 * (API_CONTRACT §18). The rules both scopes share are tested under the environment.
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, restore, scopeState, setsWorld, versionNumbers } from "../../helpers/variable-sets";
import { createVariable } from "../../helpers/variables";

describe("POST /v1/components/{id}/variables/versions/{version}/restore", () => {
  it("restores the component's own version, leaving the environment alone", async () => {
    const { owner, paths, componentId } = await setsWorld();
    await createVariable(owner, paths.environment, { name: "ENV", type: "string", value: "e" });
    await applied(owner, paths.component, { variables: { S: { type: "secret", value: "v1" } } });
    await applied(owner, paths.component, {
      variables: { S: { type: "secret", value: "v2" }, T: { type: "string", value: "t" } },
    });
    const dry = await restore(owner, paths.component, 1, { dry_run: true });
    expect(dry.body).toMatchObject({ version: 3, dry_run: true });
    expect(await versionNumbers(owner, paths.component)).toEqual([1, 2]);
    const res = await request<{ version: number; dry_run: boolean; changes: unknown[] }>(
      "POST",
      `${paths.component}/versions/1/restore`,
      { key: owner.key, body: {}, headers: { "x-request-id": `component-restore-${componentId}` } },
    );
    expect(res.body).toEqual({
      version: 3,
      dry_run: false,
      changes: [
        { name: "S", action: "updated", type: { from: "secret", to: "secret" }, value_changed: true },
        { name: "T", action: "deleted", type: { from: "string", to: null }, value_changed: true },
      ],
    });
    expect(await scopeState(owner, paths.component)).toEqual({ S: ["secret", "v1"] });
    expect(await scopeState(owner, paths.environment)).toEqual({ ENV: ["string", "e"] });
    const [entry] = await rowsOf(`component-restore-${componentId}`);
    expect(entry).toMatchObject({
      action: "restoreComponentVariableVersion",
      target_type: "component",
      target_id: componentId,
    });
    expectError(await restore(owner, paths.component, 4), 404, "not_found");
  });

  runCommonRouteTests("POST /v1/components/{id}/variables/versions/{version}/restore", async () => {
    const world = await setsWorld();
    await applied(world.owner, world.paths.component, { variables: { A: { type: "string", value: "a" } } });
    return {
      method: "POST",
      path: `${world.paths.component}/versions/1/restore`,
      caller: world.owner,
      body: {},
    };
  });
});
