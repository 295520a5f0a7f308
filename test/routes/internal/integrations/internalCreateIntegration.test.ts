/** internalCreateIntegration: POST /internal/v1/projects/{project_id}/notification-integrations. */
import { describe, expect, it } from "vitest";
import { internal, request } from "../../../helpers/api";
import type { ErrorBody } from "../../../helpers/expect";
import { createOwnedProject } from "../../../helpers/factories";
import { ALL_OFF, type Integration, integrationsPath, URL_OK } from "../../../helpers/integrations";
import { runInternalRouteTests } from "../../../helpers/security";
import { useProductionUrlRules } from "../../../helpers/webhooks";

// This file checks the production URL rules.
useProductionUrlRules();

describe("POST /internal/v1/projects/{project_id}/notification-integrations", () => {
  it("creates a slack integration, with its secret, for an existing project only", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await internal<Integration>("POST", `/projects/${project.id}/notification-integrations`, {
      type: "slack",
      url: "https://hooks.slack.com/services/T000/B000/XXXX",
      configuration: { deployments_succeeded: true },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: "slack",
      configuration: { ...ALL_OFF, deployments_succeeded: true },
    });
    expect(res.body.signing_secret).toMatch(/^whsec_/);
    const got = await request<Integration>("GET", `${integrationsPath(project.id)}/${res.body.id}`, {
      key: owner.key,
    });
    expect(got.body.type).toBe("slack");

    const missing = await internal("POST", "/projects/7Hq3VnT5m2WcXbQ9pLk4Rz/notification-integrations", {
      type: "slack",
      url: "https://hooks.slack.com/x",
    });
    expect(missing.status).toBe(404);
    const insecure = await internal<ErrorBody>("POST", `/projects/${project.id}/notification-integrations`, {
      type: "webhook",
      url: "http://127.0.0.1:9/x",
    });
    expect(insecure.status).toBe(400);
    expect(insecure.body.cause?.[0]?.path).toBe("url");
  });

  runInternalRouteTests("POST /internal/v1/projects/{project_id}/notification-integrations", async () => {
    const { project } = await createOwnedProject();
    return {
      method: "POST",
      path: `/internal/v1/projects/${project.id}/notification-integrations`,
      body: { type: "webhook", url: URL_OK, configuration: { changelog: true } },
    };
  });
});
