/** getEvent: GET /v1/events/{event_id}, one event of the event log (API_CONTRACT §13). */
import { describe, expect, it } from "vitest";
import { newId } from "../../../src/lib/ids";
import type { EventRecord } from "../../../src/schemas/event";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createOrgWithOwner, createOwnedProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { writeEvent } from "../../helpers/webhooks";

describe("GET /v1/events/{event_id}", () => {
  it("reads one event", async () => {
    const { owner, project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok", { service: "api" });
    const got = await request<EventRecord>("GET", `/v1/events/${event.id}`, { key: owner.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: event.id,
      type: "service.ok",
      project_id: project.id,
      data: { service: "api", project_id: project.id },
      created_at: event.createdAt,
    });
  });

  it("an event of another organization or an unknown id is 404; a malformed id 400", async () => {
    const { project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    const { owner: stranger } = await createOrgWithOwner();
    for (const path of [`/v1/events/${event.id}`, `/v1/events/${newId()}`]) {
      const res = await request<ErrorBody>("GET", path, { key: stranger.key });
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    expect((await request("GET", "/v1/events/bad!id", { key: stranger.key })).status).toBe(400);
  });

  runCommonRouteTests("GET event", async () => {
    const { owner, project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    return { method: "GET", path: `/v1/events/${event.id}`, caller: owner };
  });
});
