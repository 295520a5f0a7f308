/**
 * The internal API's integration and event creates (internal.createIntegration, internal.createEvent).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, request } from "../../../helpers/api";
import type { ErrorBody } from "../../../helpers/expect";
import { createOwnedProject } from "../../../helpers/factories";
import { ALL_OFF, type Integration, integrationsPath } from "../../../helpers/integrations";
import { useProductionUrlRules } from "../../../helpers/webhooks";

// This file checks the production URL rules.
useProductionUrlRules();

describe("internal API", () => {
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

  it("accepts an internal event with 202 and its ID; refuses deployment types and unknown projects", async () => {
    const { project } = await createOwnedProject();
    const ok = await internal<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "changelog.created",
      data: { title: "v2" },
    });
    expect(ok.status).toBe(202);
    expect(ok.body.id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
    const row = await env.DB.prepare("SELECT type, data FROM events WHERE id = ?").bind(ok.body.id).first<{
      type: string;
      data: string;
    }>();
    expect(row?.type).toBe("changelog.created");
    expect(JSON.parse(row?.data ?? "{}")).toEqual({ title: "v2", project_id: project.id });

    const deployment = await internal("POST", `/projects/${project.id}/events`, {
      type: "deployment.succeeded",
      data: {},
    });
    expect(deployment.status).toBe(400);
    const missing = await internal("POST", "/projects/7Hq3VnT5m2WcXbQ9pLk4Rz/events", {
      type: "service.ok",
      data: {},
    });
    expect(missing.status).toBe(404);
    const noAuth = await request("POST", `/internal/v1/projects/${project.id}/events`, {
      body: { type: "service.ok", data: {} },
    });
    expect(noAuth.status).toBe(401);
  });
});
