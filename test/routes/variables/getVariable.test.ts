/** getVariable. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, createVariable, setup, type VariableBody } from "../../helpers/variables";

describe("GET /v1/variables/{id}", () => {
  it("reads the record, never the value", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId), { value: "hidden-value" });
    const res = await request<VariableBody>("GET", `/v1/variables/${variable.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(variable);
    expect(res.raw).not.toContain("hidden-value");
    const missing = await request<ErrorBody>("GET", `/v1/variables/${"a".repeat(32)}`, { key: owner.key });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    const bad = await request<ErrorBody>("GET", "/v1/variables/x", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  runCommonRouteTests("GET /v1/variables/{id}", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "GET", path: `/v1/variables/${variable.id}`, caller: owner };
  });
});
