/** updateIntegration: PATCH /v1/projects/{project_id}/notification-integrations/{integration_id}. */

import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { notificationIntegrations } from "../../../src/db/schema";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { addProjectMember, createCaller, createOwnedProject } from "../../helpers/factories";
import {
  ALL_OFF,
  createPublicIntegration,
  type Integration,
  integrationsPath,
  one,
  URL_OK,
} from "../../helpers/integrations";
import { runCommonRouteTests } from "../../helpers/security";
import { db, integrationRow, useProductionUrlRules } from "../../helpers/webhooks";

// This file checks the production URL rules.
useProductionUrlRules();

describe("PATCH /v1/projects/{project_id}/notification-integrations/{integration_id}", () => {
  it("merges the given flags and keeps the others; may change the url", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id, {
      configuration: { deployments_failed: true, changelog: true },
    });
    const res = await request<Integration>("PATCH", `${integrationsPath(project.id)}/${integration.id}`, {
      key: owner.key,
      body: { configuration: { changelog: false, services_ok: true } },
    });
    expect(res.status).toBe(200);
    expect(res.body.configuration).toEqual({ ...ALL_OFF, deployments_failed: true, services_ok: true });
    expect(res.body.url).toBe(URL_OK);
    expect(res.body).not.toHaveProperty("signing_secret");
    expect(res.body.updated_at >= integration.updated_at).toBe(true);

    const moved = await request<Integration>("PATCH", `${integrationsPath(project.id)}/${integration.id}`, {
      key: owner.key,
      body: { url: "https://other.example.com/hook" },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe("https://other.example.com/hook");
    expect(moved.body.configuration).toEqual(res.body.configuration);
  });

  it.each([
    [{}, "configuration"],
    [{ configuration: {} }, "configuration"],
    [{ configuration: { changelog: 1 } }, "configuration.changelog"],
    [{ configuration: { nope: true } }, "configuration.nope"],
    [{ url: "http://hooks.example.com/x" }, "url"],
    [{ url: "https://192.168.0.1/x", configuration: { changelog: true } }, "url"],
    [{ type: "slack" }, "type"],
  ])("refuses %j with 400 at %s and changes nothing", async (body, path) => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    const res = await request<ErrorBody>("PATCH", `${integrationsPath(project.id)}/${integration.id}`, {
      key: owner.key,
      body,
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain(path);
    const after = await request<Integration>("GET", `${integrationsPath(project.id)}/${integration.id}`, {
      key: owner.key,
    });
    const { signing_secret: _secret, ...before } = integration;
    expect(after.body).toEqual(before);
  });

  it("a viewer is 403 forbidden; an unknown integration is 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const integration = await createPublicIntegration(owner, project.id);
    const body = { configuration: { changelog: true } };
    const res = await request<ErrorBody>("PATCH", `${integrationsPath(project.id)}/${integration.id}`, {
      key: viewer.key,
      body,
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("forbidden");
    const missing = await request("PATCH", `${integrationsPath(project.id)}/7Hq3VnT5m2WcXbQ9pLk4Rz`, {
      key: owner.key,
      body,
    });
    expect(missing.status).toBe(404);
  });

  runCommonRouteTests("PATCH integration", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    return {
      method: "PATCH",
      path: `${integrationsPath(project.id)}/${integration.id}`,
      body: { configuration: { changelog: true } },
      caller: owner,
    };
  });
});

describe("enabled / disabled", () => {
  it("PATCH refuses a non-boolean enabled and changes nothing", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    const path = one(project.id, integration.id);
    for (const enabled of ["false", 0, "null"]) {
      const res = await request<ErrorBody>("PATCH", path, { key: owner.key, body: { enabled } });
      expect(res.status, String(enabled)).toBe(400);
      expect(res.body.cause?.[0]?.path).toBe("enabled");
    }
    expect((await integrationRow(integration.id))?.enabled).toBe(true);
  });

  it("disabling twice keeps the first reason and time", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    const path = one(project.id, integration.id);
    const gone = "2026-11-01T00:00:00.000Z";
    await db
      .update(notificationIntegrations)
      .set({ enabled: false, disabledReason: "gone", disabledAt: gone })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    const res = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: false } });
    expect(res.body).toMatchObject({ enabled: false, disabled_reason: "gone", disabled_at: gone });
  });
});
