/** disconnectProject. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createOwnedProject } from "../../helpers/factories";
import type { ProjectBody } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

describe("PATCH /v1/projects/{id}/disconnect", () => {
  it("connected → disconnecting (204), then 409 while not connected", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request("PATCH", `/v1/projects/${project.id}/disconnect`, { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    const after = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(["disconnecting", "disconnected"]).toContain(after.body.connection_status);
    const again = await request<ErrorBody>("PATCH", `/v1/projects/${project.id}/disconnect`, {
      key: owner.key,
    });
    expect([again.status, again.body.code]).toEqual([409, "conflict"]);
  });

  runCommonRouteTests("PATCH /v1/projects/{id}/disconnect", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "PATCH", path: `/v1/projects/${project.id}/disconnect`, caller: owner };
  });
});
