/**
 * What each route declares about itself (its `operationId`, rate-limit policy and required
 * scope), looked up by the route that matched a request. The middleware that rate-limits,
 * checks scopes and names the audit entry's action all read this one table, so a route
 * declares each of these once, on its definition.
 *
 * Public routes are read from the OpenAPI registry. Internal routes are hidden from it (they
 * are not part of /openapi.json), so `defineInternalRoute` records them here.
 */
import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import type { Context, Env } from "hono";
import { matchedRoutes } from "hono/route";
import type { RateLimitPolicy } from "../config";
import type { AppEnv } from "./app-env";
import { SCOPE_EXTENSION, type Scope } from "./scopes";

/** Where a route publishes its rate-limit policy (`defineRoute`), read back here. */
export const RATE_LIMIT_EXTENSION = "x-rate-limit-policy";

export type RouteMeta = {
  method: string;
  path: string;
  operationId: string | undefined;
  /**
   * The audit log's `action` (API_CONTRACT §14): the operationId; an internal route's
   * `internalCreateStack` reads `internal.createStack`.
   */
  action: string | undefined;
  policy: RateLimitPolicy | undefined;
  scope: Scope | undefined;
  /** The status of its success answer (its first declared 2xx): what an executed write answered. */
  success: number | undefined;
  internal: boolean;
};

type Declared = RouteConfig & { [RATE_LIMIT_EXTENSION]?: RateLimitPolicy; [SCOPE_EXTENSION]?: Scope };

/** Internal routes by `METHOD /path`, recorded when defined (idempotent: each app defines them again). */
const internalRoutes = new Map<string, RouteConfig>();

const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

export function recordInternalRoute(route: RouteConfig): void {
  internalRoutes.set(keyOf(route.method, route.path), route);
}

function internalAction(operationId: string): string {
  const name = operationId.replace(/^internal\.?/, "");
  return `internal.${name.charAt(0).toLowerCase()}${name.slice(1)}`;
}

function metaOf(route: Declared, internal: boolean): RouteMeta {
  return {
    method: route.method.toUpperCase(),
    path: route.path,
    operationId: route.operationId,
    action: route.operationId && internal ? internalAction(route.operationId) : route.operationId,
    policy: route[RATE_LIMIT_EXTENSION],
    scope: route[SCOPE_EXTENSION],
    success: Object.keys(route.responses)
      .map(Number)
      .filter((status) => status >= 200 && status < 300)
      .sort((a, b) => a - b)[0],
    internal,
  };
}

/** Every route the app declares: the public ones of its OpenAPI registry, then the internal ones. */
export function declaredRoutes(app: OpenAPIHono<Env>): RouteMeta[] {
  const out: RouteMeta[] = [];
  for (const def of app.openAPIRegistry.definitions) {
    if (def.type === "route") out.push(metaOf(def.route as Declared, false));
  }
  for (const route of internalRoutes.values()) out.push(metaOf(route, true));
  return out;
}

/** The declarations of the route a request matched, if any. */
export type RouteLookup = (c: Context<AppEnv>) => RouteMeta | undefined;

/**
 * The lookup from a request to its route's declarations. The table is built once per isolate,
 * on first use (every route is registered by then); a path that matches no declared route has none.
 *
 * Three middlewares ask it for every request (policy, scope, audit action), so each of hono's
 * route objects (the matched routes are the app's own route objects, one per `app.use` and
 * route) is looked up once per isolate (`perRoute`): a request builds no key strings.
 */
export function routeMetaLookup<E extends Env>(
  app: OpenAPIHono<E>,
): (c: Context<E>) => RouteMeta | undefined {
  let table: Map<string, RouteMeta> | undefined;
  const perRoute = new WeakMap<object, RouteMeta | null>();
  const declaredFor = (route: { method: string; path: string }): RouteMeta | null => {
    let meta = perRoute.get(route);
    if (meta !== undefined) return meta;
    if (!table) {
      table = new Map();
      for (const declared of declaredRoutes(app as unknown as OpenAPIHono<Env>)) {
        // Hono's matched routes spell parameters `:name`; OpenAPI spells them `{name}`.
        table.set(keyOf(declared.method, declared.path.replace(/{(\w+)}/g, ":$1")), declared);
      }
    }
    meta = table.get(keyOf(route.method, route.path)) ?? null;
    perRoute.set(route, meta);
    return meta;
  };
  return (c) => {
    for (const route of matchedRoutes(c)) {
      const meta = declaredFor(route);
      if (meta) return meta;
    }
    return undefined;
  };
}
