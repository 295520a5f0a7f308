/** listComponentVariables: GET /v1/components/{component_id}/variables. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { projectRoleCallers } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, type ListBody, setup, variablesInScopes } from "../../helpers/variables";

describe("GET /v1/components/{id}/variables", () => {
  it("a component lists only its own variables, not its environment's", async () => {
    const { owner, componentId, compVar } = await variablesInScopes();
    const byComp = await request<ListBody>("GET", componentPath(componentId), { key: owner.key });
    expect(byComp.body).toEqual({ data: [compVar], has_more: false });
  });

  it("an unknown or invisible component is 404", async () => {
    const world = await setup();
    const res = await request<ErrorBody>("GET", componentPath("a".repeat(32)), { key: world.owner.key });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    // A real one, to a member of its organization who is not in its project: hidden, the same 404.
    const { outsider } = await projectRoleCallers(world);
    const hidden = await request<ErrorBody>("GET", componentPath(world.componentId), { key: outsider.key });
    expect([hidden.status, hidden.body.code], hidden.raw).toEqual([404, "not_found"]);
    expect((await request("GET", componentPath(world.componentId), { key: world.owner.key })).status).toBe(
      200,
    );
  });

  runCommonRouteTests("GET /v1/components/{id}/variables", async () => {
    const { owner, componentId } = await setup();
    return { method: "GET", path: componentPath(componentId), caller: owner };
  });
});
