/** listComponentVariableVersions: GET /v1/components/{component_id}/variables/versions (API_CONTRACT §18). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectError } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, listVersions, setsWorld } from "../../helpers/variable-sets";
import { componentPath, createVariable } from "../../helpers/variables";

describe("GET /v1/components/{id}/variables/versions", () => {
  it("lists the component's versions, newest first, each naming the component as its scope", async () => {
    const { owner, paths, componentId } = await setsWorld();
    const variable = await createVariable(owner, paths.component, { name: "A", type: "string", value: "1" });
    await applied(owner, paths.component, { variables: { B: { type: "secret", value: "b" } } });
    await request("DELETE", `/v1/variables/${variable.id}`, { key: owner.key });
    await createVariable(owner, paths.environment, { name: "ELSEWHERE" });
    const res = await listVersions(owner, paths.component);
    expect(res.status).toBe(200);
    expect(res.body.data.map((v) => [v.version, v.changes.map((c) => `${c.action} ${c.name}`)])).toEqual([
      [3, ["deleted A"]],
      [2, ["created B"]],
      [1, ["created A"]],
    ]);
    for (const v of res.body.data) expect(v.scope).toEqual({ type: "component", id: componentId });
    expect(res.headers.get("etag")).toMatch(/^W\//);
  });

  it("an unknown component is 404", async () => {
    const { owner } = await setsWorld();
    expectError(await listVersions(owner, componentPath("1111111111111111111111")), 404, "not_found");
  });

  runCommonRouteTests("GET /v1/components/{id}/variables/versions", async () => {
    const world = await setsWorld();
    return { method: "GET", path: `${world.paths.component}/versions`, caller: world.owner };
  });
});
