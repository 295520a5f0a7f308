/** The event log (API_CONTRACT §13): every read needs `viewer` on the event's project. */

import { writeEvent } from "../../../helpers/webhooks";
import { type MatrixRoute, perWorld, readRows } from "../types";

/** One event per World: the reads change nothing. */
const target = perWorld(async (world) => ({
  projectId: world.project.id,
  eventId: (await writeEvent(world.project.id, "service.ok", { service: "api" })).id,
}));
const read = readRows(target);

export const routes: MatrixRoute[] = [
  read("GET /v1/projects/{project_id}/events", (t) => `/v1/projects/${t.projectId}/events`),
  read("GET /v1/events/{event_id}", (t) => `/v1/events/${t.eventId}`),
  read("GET /v1/events/{event_id}/deliveries", (t) => `/v1/events/${t.eventId}/deliveries`),
];
