/** Notification integration routes: reads need `viewer`, create and update need `contributor` (API_CONTRACT §5). */
import { internalOk } from "../../helpers/api";
import type { MatrixRoute, World } from "../types";

const URL = "https://hooks.example.com/authz";
const integrations = (world: World) => `/v1/projects/${world.project.id}/notification-integrations`;

/** One integration per World: the reads change nothing, and every update sets the same flag. */
const shared = new WeakMap<World, Promise<string>>();
function integration(world: World): Promise<string> {
  let found = shared.get(world);
  if (!found) {
    found = internalOk<{ id: string }>("POST", `/projects/${world.project.id}/notification-integrations`, {
      type: "webhook",
      url: URL,
      configuration: { deployments_failed: true },
    }).then((created) => created.id);
    shared.set(world, found);
  }
  return found;
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
];
