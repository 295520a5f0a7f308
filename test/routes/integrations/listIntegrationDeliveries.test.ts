/** listIntegrationDeliveries: the deliveries log of an integration. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { createOwnedProject, unique } from "../../helpers/factories";
import { createPublicIntegration, integrationsPath } from "../../helpers/integrations";
import { runCommonRouteTests } from "../../helpers/security";
import { allowTheLocalReceiver, hook, integrate, writeDelivery, writeEvent } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("deliveries log", () => {
  it("pages newest first by default, oldest first on request", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await integrate(project.id, hook(unique("log")), { services_ok: true });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const event = await writeEvent(project.id, "service.ok");
      ids.push(
        await writeDelivery(project.id, event.id, integration.id, { at: `2026-01-0${i + 1}T00:00:00.000Z` }),
      );
    }
    const path = `/v1/projects/${project.id}/notification-integrations/${integration.id}/deliveries`;
    type LogPage = { data: Array<{ id: string; status: string }>; has_more: boolean; next_page?: string };
    const first = await request<LogPage>("GET", `${path}?limit=2`, { key: owner.key });
    expect(first.body.data.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.has_more).toBe(true);
    const second = await request<LogPage>(
      "GET",
      `${path}?limit=2&after=${encodeURIComponent(first.body.next_page ?? "")}`,
      { key: owner.key },
    );
    expect(second.body).toMatchObject({ data: [{ id: ids[0], status: "pending" }], has_more: false });
    const ascending = await request<LogPage>("GET", `${path}?sort_by=created_at`, { key: owner.key });
    expect(ascending.body.data.map((d) => d.id)).toEqual(ids);
  });
});

describe("GET .../deliveries", () => {
  it("is empty for a new integration and documented in /openapi.json", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    const res = await request("GET", `${integrationsPath(project.id)}/${integration.id}/deliveries`, {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], has_more: false });
    const doc = await request<{ paths: Record<string, Record<string, { operationId: string }>> }>(
      "GET",
      "/openapi.json",
    );
    const paths = doc.body.paths;
    expect(
      paths["/v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries"]?.get
        ?.operationId,
    ).toBe("listIntegrationDeliveries");
    expect(paths["/v1/projects/{project_id}/notification-integrations"]?.post?.operationId).toBe(
      "createIntegration",
    );
    expect(JSON.stringify(doc.body)).not.toContain("/internal/");
  });

  it("refuses a bad cursor and a bad limit", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    const path = `${integrationsPath(project.id)}/${integration.id}/deliveries`;
    expect((await request("GET", `${path}?after=%%%`, { key: owner.key })).status).toBe(400);
    expect((await request("GET", `${path}?limit=0`, { key: owner.key })).status).toBe(400);
  });

  runCommonRouteTests("GET deliveries", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    return {
      method: "GET",
      path: `${integrationsPath(project.id)}/${integration.id}/deliveries`,
      caller: owner,
    };
  });
});
