/**
 * Notification integration routes: reads need `viewer`; create, update and the webhook
 * operations (test, redeliver, recover, rotate-secret) need `contributor` (API_CONTRACT §5, §13).
 */
import { eq } from "drizzle-orm";
import { notificationIntegrations } from "../../../../src/db/schema";
import { createIntegration } from "../../../helpers/factories";
import { db, writeDelivery, writeEvent } from "../../../helpers/webhooks";
import type { MatrixRoute, World } from "../types";

const URL = "https://hooks.example.com/authz";
const integrations = (world: World) => `/v1/projects/${world.project.id}/notification-integrations`;

/** One integration per World: the reads change nothing, and every update sets the same flag. */
const shared = new WeakMap<World, Promise<string>>();
function integration(world: World): Promise<string> {
  let found = shared.get(world);
  if (!found) {
    found = createIntegration(world.project.id, {
      url: URL,
      configuration: { deployments_failed: true },
    }).then((created) => created.id);
    shared.set(world, found);
  }
  return found;
}

/**
 * The integration the operations act on. Its stored URL is one the send-time check refuses, so
 * a test send answers at once (`delivered: false`) and queued redeliveries never leave the
 * machine, whatever the cell.
 */
const target = new WeakMap<World, Promise<string>>();
function operated(world: World): Promise<string> {
  let found = target.get(world);
  if (!found) {
    found = createIntegration(world.project.id, { url: URL }).then(async ({ id }) => {
      await db
        .update(notificationIntegrations)
        .set({ url: "http://127.0.0.1:9/refused" })
        .where(eq(notificationIntegrations.id, id))
        .run();
      return id;
    });
    target.set(world, found);
  }
  return found;
}

/** A failed delivery of a new event, per cell. */
async function failedDelivery(world: World) {
  const integrationId = await operated(world);
  const event = await writeEvent(world.project.id, "changelog.created");
  const deliveryId = await writeDelivery(world.project.id, event.id, integrationId, { status: "failed" });
  return { integrationId, deliveryId };
}

export const routes: MatrixRoute[] = [
  {
    name: "GET /v1/projects/{project_id}/notification-integrations",
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: integrations(world) }),
  },
  {
    name: "POST /v1/projects/{project_id}/notification-integrations",
    action: "write",
    success: 201,
    prepare: async (world) => ({
      method: "POST",
      path: integrations(world),
      body: { type: "webhook", url: URL, configuration: { changelog: true } },
    }),
  },
  {
    name: "GET /v1/projects/{project_id}/notification-integrations/{integration_id}",
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: `${integrations(world)}/${await integration(world)}` }),
  },
  {
    name: "PATCH /v1/projects/{project_id}/notification-integrations/{integration_id}",
    action: "write",
    success: 200,
    prepare: async (world) => ({
      method: "PATCH",
      path: `${integrations(world)}/${await integration(world)}`,
      body: { configuration: { services_ok: true } },
    }),
  },
  {
    name: "GET /v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries",
    action: "read",
    success: 200,
    prepare: async (world) => ({
      method: "GET",
      path: `${integrations(world)}/${await integration(world)}/deliveries`,
    }),
  },
  {
    name: "POST /v1/projects/{project_id}/notification-integrations/{integration_id}/test",
    action: "write",
    success: 200,
    prepare: async (world) => ({
      method: "POST",
      path: `${integrations(world)}/${await operated(world)}/test`,
      body: { type: "service.ok" },
    }),
  },
  {
    name: "POST /v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries/{delivery_id}/redeliver",
    action: "write",
    success: 202,
    prepare: async (world) => {
      const { integrationId, deliveryId } = await failedDelivery(world);
      return {
        method: "POST",
        path: `${integrations(world)}/${integrationId}/deliveries/${deliveryId}/redeliver`,
      };
    },
  },
  {
    name: "POST /v1/projects/{project_id}/notification-integrations/{integration_id}/recover",
    action: "write",
    success: 202,
    prepare: async (world) => ({
      method: "POST",
      path: `${integrations(world)}/${await operated(world)}/recover`,
      // A range in the future: nothing to queue, the answer is still 202.
      body: { since: "2099-01-01T00:00:00Z" },
    }),
  },
  {
    name: "POST /v1/projects/{project_id}/notification-integrations/{integration_id}/rotate-secret",
    action: "write",
    success: 200,
    prepare: async (world) => ({
      method: "POST",
      path: `${integrations(world)}/${await operated(world)}/rotate-secret`,
      body: { expire_previous_in: 0 },
    }),
  },
];
