/** internalCreateEvent: POST /internal/v1/projects/{project_id}/events, an event of a producer (API_CONTRACT §13). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, request } from "../../../helpers/api";
import { createOwnedProject } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/projects/{project_id}/events", () => {
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

  runInternalRouteTests("POST /internal/v1/projects/{project_id}/events", async () => {
    const { project } = await createOwnedProject();
    return {
      method: "POST",
      path: `/internal/v1/projects/${project.id}/events`,
      body: { type: "changelog.created", data: {} },
    };
  });
});
