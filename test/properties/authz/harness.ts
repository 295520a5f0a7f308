/**
 * Builds the World of the authorization matrix (test/properties/authz/types.ts): one organization
 * whose callers hold every role of API_CONTRACT §5 on `world.project`, plus the owner of
 * another organization.
 */
import type { ProjectRole } from "../../../src/db/schema";
import { request } from "../../helpers/api";
import {
  type Caller,
  createApiKey,
  createCaller,
  createOrgWithOwner,
  createProject,
  type Project,
} from "../../helpers/factories";
import type { Actor, World } from "./types";

const MEMBER_ROLES: Array<[Actor, ProjectRole]> = [
  ["project_owner", "owner"],
  ["project_contributor", "contributor"],
  ["project_viewer", "viewer"],
];

export async function buildWorld(): Promise<World> {
  const { org, owner } = await createOrgWithOwner();
  const scopedOwnerKey = async (fields: Record<string, unknown>): Promise<Caller> => {
    const { record: _, ...caller } = await createApiKey(owner, fields);
    return caller;
  };
  const elsewhere = await createProject(owner);
  const actors: Record<Actor, Caller> = {
    org_owner: await scopedOwnerKey({ name: "matrix actor" }),
    org_admin: await createCaller(org, "admin"),
    project_owner: await createCaller(org, "member", owner),
    project_contributor: await createCaller(org, "member", owner),
    project_viewer: await createCaller(org, "member", owner),
    org_member_outsider: await createCaller(org, "member", owner),
    other_org_owner: (await createOrgWithOwner()).owner,
    read_scopes_key: await scopedOwnerKey({ scopes: [...READ_SCOPES] }),
    other_project_key: await scopedOwnerKey({ project_ids: [elsewhere.id] }),
  };

  const fresh = async (): Promise<Project> => {
    const project = await createProject(owner);
    for (const [actor, role] of MEMBER_ROLES) {
      const res = await request("POST", `/v1/projects/${project.id}/members`, {
        key: owner.key,
        body: { account_ids: [actors[actor].accountId], role },
      });
      if (res.status !== 201) throw new Error(`matrix world: add ${actor} → ${res.status} ${res.raw}`);
    }
    return project;
  };

  const project = await fresh();
  return {
    project,
    actors,
    // Setup acts with the owner's first key, the `org_owner` actor with a key of its own. The test
    // configuration raises the per-key limit, so setup never spends the actors' budget.
    owner,
    fresh,
  };
}

/** The role an actor acts with on a project of the World (null: cannot see it). */
export const ACTOR_ROLE: Record<Actor, ProjectRole | null> = {
  org_owner: "owner",
  org_admin: "owner",
  project_owner: "owner",
  project_contributor: "contributor",
  project_viewer: "viewer",
  org_member_outsider: null,
  other_org_owner: null,
  // Acts as the org owner, within its scopes (a write or the reveal is 403 forbidden: see the matrix).
  read_scopes_key: "owner",
  // Restricted to another project: the World's projects do not exist for it.
  other_project_key: null,
};

/** Every `<area>:read` scope of API_CONTRACT §15, §21 (`api-keys:read`) and part four (`environments:read`). */
export const READ_SCOPES = [
  "projects:read",
  "members:read",
  "integrations:read",
  "variables:read",
  "deployments:read",
  "resources:read",
  "events:read",
  "audit:read",
  "orgs:read",
  "api-keys:read",
  "environments:read",
] as const;
