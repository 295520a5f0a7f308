/** listIntegrationDeliveries: the deliveries log of an integration. */
import { describe, expect, it } from "vitest";
import { request } from "../helpers/api";
import { unique } from "../helpers/factories";
import {
  allowTheLocalReceiver,
  hook,
  integrate,
  newProject,
  writeDelivery,
  writeEvent,
} from "../helpers/webhooks";

allowTheLocalReceiver();

describe("deliveries log", () => {
  it("pages newest first by default, oldest first on request", async () => {
    const { owner, project } = await newProject();
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
