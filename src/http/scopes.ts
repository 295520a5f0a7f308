/**
 * API key scopes (API_CONTRACT §15): what each operation needs, derived once from its route.
 *
 * The rule: `<area>:read` for a GET and `<area>:write` otherwise, where the area is the last
 * segment of the path that names a resource (`/v1/orgs/{org_id}/projects` is `projects`,
 * `/v1/projects/{id}/notification-integrations/{id}/deliveries` is `integrations`). The event
 * log and the audit logs are read-only areas (`events:read`, `audit:read`). The one exception
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
  "orgs:read",
  "orgs:write",
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
};

/** The scope an operation needs by the rule, or throws: a new area must be named here first. */
export function ruleScope(method: string, path: string): Scope {
  const segments = path.split("/").filter((s) => s && !s.startsWith("{"));
  const area = segments.reduce<string | undefined>((found, s) => AREA_OF_SEGMENT[s] ?? found, undefined);
  if (!area)
    throw new Error(`No scope area for ${method.toUpperCase()} ${path}: name it in src/http/scopes.ts`);
  const read = method.toLowerCase() === "get";
  if (!read && (area === "events" || area === "audit")) {
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
