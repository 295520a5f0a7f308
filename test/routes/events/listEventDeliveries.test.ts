/** listEventDeliveries: GET /v1/events/{event_id}/deliveries, the deliveries one event made (API_CONTRACT §13). */
import { describe, expect, it } from "vitest";
import { deliveryAttempts } from "../../../src/db/schema";
import { newId } from "../../../src/lib/ids";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createOrgWithOwner, createOwnedProject, unique } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { db, integrate, writeDelivery, writeEvent } from "../../helpers/webhooks";

type Page<T> = { data: T[]; has_more: boolean; next_page?: string };

describe("GET /v1/events/{event_id}/deliveries", () => {
  it("lists the deliveries an event made, with their attempts", async () => {
    const { owner, project } = await createOwnedProject();
    const one = await integrate(project.id, `https://hooks.example.com/${unique("e1")}`, {
      services_ok: true,
    });
    const two = await integrate(project.id, `https://hooks.example.com/${unique("e2")}`, {
      services_ok: true,
    });
    const event = await writeEvent(project.id, "service.ok", { service: "api" });
    const d1 = await writeDelivery(project.id, event.id, one.id, { status: "failed", attempts: 1 });
    const d2 = await writeDelivery(project.id, event.id, two.id, { status: "skipped" });
    await db
      .insert(deliveryAttempts)
      .values({
        id: newId(),
        deliveryId: d1,
        attempt: 1,
        statusCode: 500,
        error: "HTTP 500",
        durationMs: 12,
        createdAt: new Date().toISOString(),
      })
      .run();

    const deliveries = await request<Page<{ id: string; status: string; attempt_log: unknown[] }>>(
      "GET",
      `/v1/events/${event.id}/deliveries?sort_by=created_at`,
      { key: owner.key },
    );
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.map((d) => [d.id, d.status, d.attempt_log.length]).sort()).toEqual(
      [
        [d1, "failed", 1],
        [d2, "skipped", 0],
      ].sort(),
    );
  });

  it("the deliveries of another organization's event are 404", async () => {
    const { project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    const { owner: stranger } = await createOrgWithOwner();
    const path = `/v1/events/${event.id}/deliveries`;
    const res = await request<ErrorBody>("GET", path, { key: stranger.key });
    expect(res.status, path).toBe(404);
    expect(res.body.code).toBe("not_found");
  });

  runCommonRouteTests("GET event deliveries", async () => {
    const { owner, project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    return { method: "GET", path: `/v1/events/${event.id}/deliveries`, caller: owner };
  });
});
