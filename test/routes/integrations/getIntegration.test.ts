/** getIntegration: GET /v1/projects/{project_id}/notification-integrations/{integration_id}. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { addProjectMember, createCaller, createOwnedProject, createProject } from "../../helpers/factories";
import { createPublicIntegration, type Integration, integrationsPath, one } from "../../helpers/integrations";
import { runCommonRouteTests } from "../../helpers/security";
import { useProductionUrlRules } from "../../helpers/webhooks";

// This file checks the production URL rules.
useProductionUrlRules();

describe("GET /v1/projects/{project_id}/notification-integrations/{integration_id}", () => {
  it("an integration of another project of the same org is 404 under this project", async () => {
    const { owner, project } = await createOwnedProject();
    const other = await createProject(owner);
    const integration = await createPublicIntegration(owner, other.id);
    const res = await request<ErrorBody>("GET", `${integrationsPath(project.id)}/${integration.id}`, {
      key: owner.key,
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });

  runCommonRouteTests("GET integration", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    return { method: "GET", path: `${integrationsPath(project.id)}/${integration.id}`, caller: owner };
  });
});

describe("reading an integration", () => {
  it("reads the integration as created, without its signing secret; a project viewer may read it", async () => {
    const { org, owner, project } = await createOwnedProject();
    const created = await createPublicIntegration(owner, project.id, { configuration: { changelog: true } });
    const { signing_secret: secret, ...record } = created;
    expect(secret).toMatch(/^whsec_/);
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    for (const caller of [owner, viewer]) {
      const res = await request<Integration>("GET", one(project.id, created.id), { key: caller.key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(record);
      expect(res.raw).not.toContain(secret);
    }
  });
});
