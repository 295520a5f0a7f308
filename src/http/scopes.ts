/**
 * API key scopes (API_CONTRACT §15): what each operation needs, derived once from its route.
 *
 * The rule: `<area>:read` for a GET and `<area>:write` otherwise, where the area is the last
 * segment of the path that names a resource (`/v1/orgs/{org_id}/projects` is `projects`,
 * `/v1/projects/{id}/notification-integrations/{id}/deliveries` is `integrations`). The event
 * log is a read-only area (`events:read`); the audit area's one write is its streams (`audit:write`). The one exception
 * the rule cannot see, the reveal (`variables:reveal`), is declared on its route.
 */

export const SCOPES = [
  "*",
  "projects:read",
  "projects:write",
  "members:read",
  "members:write",
  "integrations:read",
  "integrations:write",
  "variables:read",
  "variables:write",
  "variables:reveal",
  "deployments:read",
  "deployments:write",
  "resources:read",
  "events:read",
  "audit:read",
  // API_CONTRACT §30: the audit streams' writes.
  "audit:write",
  "orgs:read",
  "orgs:write",
  "api-keys:read",
  "api-keys:write",
  "environments:read",
  "environments:write",
] as const;
export type Scope = (typeof SCOPES)[number];

/** Every `<area>:read` scope: what a read-only key holds. */
export const READ_SCOPES = SCOPES.filter((s) => s.endsWith(":read"));

export const SCOPE_EXTENSION = "x-required-scope";

/** Path segment → area. The last segment of a path found here is the operation's area. */
const AREA_OF_SEGMENT: Record<string, string> = {
  orgs: "orgs",
  projects: "projects",
  members: "members",
  "notification-integrations": "integrations",
  variables: "variables",
  deployments: "deployments",
  resources: "resources",
  events: "events",
  "audit-log": "audit",
  // API_CONTRACT §30: an organization's audit log streams (read `audit:read`, written `audit:write`).
  "audit-streams": "audit",
  "api-keys": "api-keys",
  // API_CONTRACT §27: a trust is a way to make keys, read and written with the keys' scopes.
  "oidc-trusts": "api-keys",
  // API_CONTRACT part four: an environment, a component or a stack (and an environment's protection
  // or lock); a later segment still names the area (`/v1/stacks/{id}/resources` is `resources`).
  environments: "environments",
  components: "environments",
  stacks: "environments",
};

/** The scope an operation needs by the rule, or throws: a new area must be named here first. */
export function ruleScope(method: string, path: string): Scope {
  const segments = path.split("/").filter((s) => s && !s.startsWith("{"));
  const area = segments.reduce<string | undefined>((found, s) => AREA_OF_SEGMENT[s] ?? found, undefined);
  if (!area)
    throw new Error(`No scope area for ${method.toUpperCase()} ${path}: name it in src/http/scopes.ts`);
  const read = method.toLowerCase() === "get";
  if (!read && area === "events") {
    throw new Error(`${area} is a read-only area; declare the scope of ${method.toUpperCase()} ${path}`);
  }
  const scope = `${area}:${read ? "read" : "write"}`;
  if (!(SCOPES as readonly string[]).includes(scope)) throw new Error(`Unknown scope ${scope} for ${path}`);
  return scope as Scope;
}

/** A key's scopes grant `needed` when they hold it or `*`. */
export function grants(scopes: readonly string[], needed: Scope): boolean {
  return scopes.includes("*") || scopes.includes(needed);
}

/**
 * What a key may do (API_CONTRACT §15, §21): its scopes, the projects it is restricted to (null:
 * every project its account may see) and when it stops working (null: never). A key made from
 * another acts as the same account, so these three are all that can differ between them.
 */
export type KeyPowers = {
  scopes: readonly string[];
  projectIds: readonly string[] | null;
  /** An instant as stored (RFC 3339 UTC), or null. */
  expiresAt: string | null;
};

export type KeyExcess = { path: "scopes" | "project_ids" | "expires_at"; message: string };

/**
 * How a key `child` would exceed the key `parent` that makes it (API_CONTRACT §21): one item per
 * field that exceeds, none when `child` can do nothing `parent` cannot. Beside `grants`, which
 * decides what each key may do per request, so the two rules are read together:
 * - scopes: each must be granted by the parent; `*` (which also holds scopes added later) only
 *   from a `*` key, even one that lists every scope there is today;
 * - projects: a restricted parent makes only restricted keys, within its own projects;
 * - expiry: no later than the parent's, and never "no expiry" under a parent that expires.
 */
export function keyExcess(parent: KeyPowers, child: KeyPowers): KeyExcess[] {
  const out: KeyExcess[] = [];
  const parentAll = parent.scopes.includes("*");
  const extraScopes = parentAll ? [] : child.scopes.filter((s) => !parent.scopes.includes(s));
  if (extraScopes.length) {
    out.push({
      path: "scopes",
      message: `Not held by the key making it: ${extraScopes.map((s) => `\`${s}\``).join(", ")}.`,
    });
  }
  if (parent.projectIds !== null) {
    const allowed = parent.projectIds;
    if (child.projectIds === null) {
      out.push({
        path: "project_ids",
        message: "The key making it is restricted to some projects, so this key must be restricted too.",
      });
    } else {
      const outside = child.projectIds.filter((id) => !allowed.includes(id));
      if (outside.length) {
        out.push({
          path: "project_ids",
          message: `Not among the projects of the key making it: ${outside.join(", ")}.`,
        });
      }
    }
  }
  if (parent.expiresAt !== null) {
    if (child.expiresAt === null) {
      out.push({
        path: "expires_at",
        message: `The key making it expires at ${parent.expiresAt}; this key must expire by then too.`,
      });
    } else if (Date.parse(child.expiresAt) > Date.parse(parent.expiresAt)) {
      out.push({
        path: "expires_at",
        message: `Later than the key making it, which expires at ${parent.expiresAt}.`,
      });
    }
  }
  return out;
}
