/** exportComponentVariables: GET /v1/components/{component_id}/variables/export (API_CONTRACT §18), a reveal. */
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, exportScope, setsWorld } from "../../helpers/variable-sets";
import { componentPath } from "../../helpers/variables";

describe("GET /v1/components/{id}/variables/export", () => {
  it("exports the component's own variables only, recorded against the component", async () => {
    const { owner, paths, componentId } = await setsWorld();
    await applied(owner, paths.environment, { variables: { ENV_ONLY: { type: "string", value: "e" } } });
    await applied(owner, paths.component, {
      variables: { Z: { type: "secret", value: "z\n" }, A: { type: "string", value: "a" } },
    });
    const res = await exportScope(owner, paths.component, {
      "x-request-id": `component-export-${componentId}`,
    });
    expect(res.status).toBe(200);
    expect(res.raw).toBe('A="a"\nZ="z\\n"\n');
    expect(res.headers.get("cache-control")).toBe("no-store");
    const [entry] = await rowsOf(`component-export-${componentId}`);
    expect(entry).toMatchObject({
      action: "exportComponentVariables",
      target_type: "component",
      target_id: componentId,
    });
    expect(JSON.parse(entry?.changes as string)).toEqual({ names: { from: null, to: ["A", "Z"] } });
    expectError(await exportScope(owner, componentPath("1111111111111111111111")), 404, "not_found");
  });

  runCommonRouteTests("GET /v1/components/{id}/variables/export", async () => {
    const world = await setsWorld();
    return { method: "GET", path: `${world.paths.component}/export`, caller: world.owner };
  });
});
