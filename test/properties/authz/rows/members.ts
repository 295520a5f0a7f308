/** Project member routes (API_CONTRACT §5: read needs viewer, add/replace/remove need owner). */
import { request } from "../../../helpers/api";
import { orgAccount } from "../../../helpers/members";
import type { MatrixRoute, World } from "../types";

const members = (world: World) => `/v1/projects/${world.project.id}/members`;

/** An account of the World's organization that is not yet a project member. */
const newOrgAccount = async (world: World) => (await orgAccount({ id: world.project.org_id })).id;

/** A viewer of `world.project` that only this cell uses, so a change to it affects no other cell. */
async function disposableMember(world: World): Promise<string> {
  const accountId = await newOrgAccount(world);
  const res = await request("POST", members(world), {
    key: world.owner.key,
    body: { account_ids: [accountId] },
  });
  if (res.status !== 201) throw new Error(`add member → ${res.status} ${res.raw}`);
  return accountId;
}

export const routes: MatrixRoute[] = [
  {
    name: "GET /v1/projects/{project_id}/members",
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: members(world) }),
  },
  {
    name: "POST /v1/projects/{project_id}/members",
    action: "manage",
    success: 201,
    prepare: async (world) => ({
      method: "POST",
      path: members(world),
      body: { account_ids: [await newOrgAccount(world)], role: "contributor" },
    }),
  },
  {
    name: "GET /v1/projects/{project_id}/members/{member_id}",
    action: "read",
    success: 200,
    prepare: async (world) => ({
      method: "GET",
      path: `${members(world)}/${world.actors.project_viewer.accountId}`,
    }),
  },
  {
    name: "PUT /v1/projects/{project_id}/members/{member_id}",
    action: "manage",
    success: 200,
    prepare: async (world) => ({
      method: "PUT",
      path: `${members(world)}/${await disposableMember(world)}`,
      body: { role: "contributor" },
    }),
  },
  {
    name: "DELETE /v1/projects/{project_id}/members/{member_id}",
    action: "manage",
    success: 204,
    prepare: async (world) => ({
      method: "DELETE",
      path: `${members(world)}/${await disposableMember(world)}`,
    }),
  },
];
