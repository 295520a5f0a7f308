/** getComponentVariableVersion: GET /v1/components/{component_id}/variables/versions/{version} (API_CONTRACT §18). */
import { describe, expect, it } from "vitest";
import { expectError } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, getVersion, setsWorld } from "../../helpers/variable-sets";

describe("GET /v1/components/{id}/variables/versions/{version}", () => {
  it("answers one version of the component; another scope's numbers are not its own", async () => {
    const { owner, paths, componentId } = await setsWorld();
    await applied(owner, paths.environment, { variables: { E1: { type: "string", value: "1" } } });
    await applied(owner, paths.environment, { variables: { E2: { type: "string", value: "2" } } });
    expectError(await getVersion(owner, paths.component, 1), 404, "not_found");
    await applied(owner, paths.component, { variables: { C: { type: "secure_string", value: "c" } } });
    const res = await getVersion(owner, paths.component, 1);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      version: 1,
      scope: { type: "component", id: componentId },
      changes: [
        { name: "C", action: "created", type: { from: null, to: "secure_string" }, value_changed: true },
      ],
    });
    expectError(await getVersion(owner, paths.component, 2), 404, "not_found");
    expectError(await getVersion(owner, paths.component, "first"), 400, "bad_input", "version");
  });

  runCommonRouteTests("GET /v1/components/{id}/variables/versions/{version}", async () => {
    const world = await setsWorld();
    await applied(world.owner, world.paths.component, { variables: { A: { type: "string", value: "a" } } });
    return { method: "GET", path: `${world.paths.component}/versions/1`, caller: world.owner };
  });
});
