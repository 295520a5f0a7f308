/** deleteProject. */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { createComponent, createEnvironment, createOwnedProject, createStack } from "../../helpers/factories";
import { projectCaller } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";
import { createVariable, environmentPath, setup } from "../../helpers/variables";

describe("DELETE /v1/projects/{id}", () => {
  it("deletes the project and everything inside it; it is then 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    const member = await projectCaller(org, owner, project, "viewer");
    const staging = await createEnvironment(project.id);
    await createComponent(staging.id);
    await createStack(staging.id);
    const tables = ["environments", "components", "stacks", "project_members"];
    const counts = async () => {
      const out: Record<string, number> = {};
      for (const table of tables) {
        const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE project_id = ?`)
          .bind(project.id)
          .first<{ n: number }>();
        out[table] = row?.n ?? 0;
      }
      return out;
    };
    // Each of them holds rows of the project before (the count after means something).
    for (const [table, n] of Object.entries(await counts())) expect(n, table).toBeGreaterThan(0);
    const res = await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    expect(await counts()).toEqual(Object.fromEntries(tables.map((t) => [t, 0])));
    expect((await request("GET", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(404);
    expect((await request("GET", `/v1/projects/${project.id}`, { key: member.key })).status).toBe(404);
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(404);
  });

  runCommonRouteTests("DELETE /v1/projects/{id}", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "DELETE", path: `/v1/projects/${project.id}`, caller: owner };
  });
});

describe("what a project holds", () => {
  it("deleting the project deletes its variables", async () => {
    const { owner, project, environmentId } = await setup();
    const variable = await createVariable(owner, environmentPath(environmentId));
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    const row = await env.DB.prepare("SELECT id FROM variables WHERE id = ?").bind(variable.id).first();
    expect(row).toBeNull();
  });
});
