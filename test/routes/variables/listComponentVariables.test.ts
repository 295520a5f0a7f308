/** listComponentVariables: GET /v1/components/{component_id}/variables. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, type ListBody, setup, variablesInScopes } from "../../helpers/variables";

describe("GET /v1/components/{id}/variables", () => {
  it("a component lists only its own variables, not its environment's", async () => {
    const { owner, componentId, compVar } = await variablesInScopes();
    const byComp = await request<ListBody>("GET", componentPath(componentId), { key: owner.key });
    expect(byComp.body).toEqual({ data: [compVar], has_more: false });
  });

  it("an unknown or invisible component is 404", async () => {
    const { owner } = await setup();
    const res = await request<ErrorBody>("GET", componentPath("a".repeat(32)), { key: owner.key });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests("GET /v1/components/{id}/variables", async () => {
    const { owner, componentId } = await setup();
    return { method: "GET", path: componentPath(componentId), caller: owner };
  });
});
