/** deleteVariable. */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, createVariable, environmentPath, setup } from "../../helpers/variables";

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

  it("deleting the project deletes its variables", async () => {
    const { owner, project, environmentId } = await setup();
    const variable = await createVariable(owner, environmentPath(environmentId));
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    const row = await env.DB.prepare("SELECT id FROM variables WHERE id = ?").bind(variable.id).first();
    expect(row).toBeNull();
  });

  runCommonRouteTests("DELETE /v1/variables/{id}", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "DELETE", path: `/v1/variables/${variable.id}`, caller: owner };
  });
});
