/** deleteVariable. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, createVariable, setup } from "../../helpers/variables";

describe("DELETE /v1/variables/{id}", () => {
  it("deletes; the variable is then 404 everywhere and its name is free", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId), { name: "GONE" });
    const res = await request("DELETE", `/v1/variables/${variable.id}`, { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    for (const [method, path] of [
      ["GET", `/v1/variables/${variable.id}`],
      ["GET", `/v1/variables/${variable.id}/value`],
      ["DELETE", `/v1/variables/${variable.id}`],
    ] as const) {
      const after = await request<ErrorBody>(method, path, { key: owner.key });
      expect([after.status, after.body.code]).toEqual([404, "not_found"]);
    }
    await createVariable(owner, componentPath(componentId), { name: "GONE" });
  });

  runCommonRouteTests("DELETE /v1/variables/{id}", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "DELETE", path: `/v1/variables/${variable.id}`, caller: owner };
  });
});
