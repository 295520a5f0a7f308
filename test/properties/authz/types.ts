/**
 * The authorization matrix's row format. Each area adds one file under test/properties/authz/rows/
 * exporting `routes: MatrixRoute[]`; test/properties/authz/matrix.test.ts runs every row against every actor.
 */
import type { Caller, Project } from "../../helpers/factories";

/** The callers of every cell: the seven of API_CONTRACT §5 and two scoped keys of §15. */
export type Actor =
  | "org_owner"
  | "org_admin"
  | "project_owner" // org member who is project owner
  | "project_contributor" // org member who is project contributor
  | "project_viewer" // org member who is project viewer
  | "org_member_outsider" // org member, not a member of the project
  | "other_org_owner" // owner of another organization
  | "read_scopes_key" // the org owner's account, with every `<area>:read` scope and nothing else
  | "other_project_key"; // the org owner's account, restricted to a project outside the World

export const ACTORS: Actor[] = [
  "org_owner",
  "org_admin",
  "project_owner",
  "project_contributor",
  "project_viewer",
  "org_member_outsider",
  "other_org_owner",
  "read_scopes_key",
  "other_project_key",
];

/**
 * A project whose memberships give each actor its role; `owner` is the org owner.
 * `fresh()` makes another such project (for routes that destroy or change their target).
 */
export type World = {
  project: Project;
  actors: Record<Actor, Caller>;
  owner: Caller;
  fresh: () => Promise<Project>;
};

export type MatrixRoute = {
  /** e.g. "PATCH /v1/deployments/{id}/cancel" */
  name: string;
  /**
   * The minimum project role (API_CONTRACT §5): `read` viewer, `write` contributor, `manage` owner.
   * The expected status of each cell follows from it: enough role → `success`; too low → 403
   * forbidden; cannot see the project (outsider, other org) → 404 not_found.
   */
  action: "read" | "write" | "manage";
  success: number;
  /** Builds a fresh request for one cell (creating what it needs, e.g. with `world.fresh()` or the internal API). */
  prepare: (world: World, actor: Actor) => Promise<{ method: string; path: string; body?: unknown }>;
  /** Overrides for cells that differ from the rule (say why in a comment). */
  expect?: Partial<Record<Actor, number>>;
};

/**
 * A /v1 route deliberately outside the matrix because no project role governs it.
 * A rows file may export `unscoped: UnscopedRoute[]`; the matrix's coverage check
 * accepts every route of /openapi.json that is either a row or listed here.
 */
export type UnscopedRoute = { name: string; why: string };

/** `make` run once per World (for targets that read-only rows share), then its cached promise. */
export function perWorld<T>(make: (world: World) => Promise<T>): (world: World) => Promise<T> {
  const made = new WeakMap<World, Promise<T>>();
  return (world) => {
    let found = made.get(world);
    if (!found) {
      found = make(world);
      made.set(world, found);
    }
    return found;
  };
}

/** A builder of `read` rows (GET, 200 for `viewer` and above) over a shared target. */
export function readRows<T>(target: (world: World) => Promise<T>) {
  return (name: string, path: (t: T) => string): MatrixRoute => ({
    name,
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: path(await target(world)) }),
  });
}
