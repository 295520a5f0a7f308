/**
 * What each route declares about itself (its `operationId`, rate-limit policy and required
 * scope), read from its definition when the operation is built (src/http/operations.ts). The
 * middleware that rate-limits, checks scopes and names the audit entry's action all read it, so a
 * route declares each of these once, on its definition.
 *
 * Public routes are read from the OpenAPI registry. Internal routes are hidden from it (they
 * are not part of /openapi.json), so `defineInternalRoute` records them here.
 */
import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import type { RateLimitPolicy } from "../config";
import { SCOPE_EXTENSION, type Scope } from "./scopes";

/** Where a route publishes its rate-limit policy (`defineRoute`), read back here. */
export const RATE_LIMIT_EXTENSION = "x-rate-limit-policy";

/**
 * Where a route that answers live streams (`Accept: text/event-stream`) publishes how many its key
 * family may hold open at once (API_CONTRACT §33; `defineRoute`'s `liveStream`), read back here.
 */
export const LIVE_STREAM_EXTENSION = "x-live-stream-limit";

/** Where a write publishes how its lost answer is rebuilt (`defineRoute`), read back here. */
export const LOST_ANSWER_EXTENSION = "x-lost-answer";

/**
 * How a keyed write's answer is rebuilt when a crash lost it after the write committed
 * (API_CONTRACT §11; src/idempotency/executed.ts), declared on the write's route:
 * - `record`: the record the write answered, read again at `from`: the request's own path, or a
 *   path in which `{target}` is the write's audit entry's target (the record it made);
 * - `status`: a 204, whose status is the whole answer;
 * - `none`: it cannot be rebuilt (`why`: a secret shown once, a count, a result); a retry is a 409
 *   that says the write ran, and the write never runs twice.
 */
export type LostAnswer =
  | { rebuild: "record"; from: "request-path" | `/v1/${string}{target}${string}` }
  | { rebuild: "status" }
  | { rebuild: "none"; why: string };

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
  /**
   * What an executed write answered: its one 2xx, or `201` where a write also answers a `200` that
   * changes nothing (a promotion's `dry_run` plan, API_CONTRACT §25), which never commits a key.
   */
  success: number | undefined;
  /** A public write's declaration of how its lost answer is rebuilt. */
  lostAnswer: LostAnswer | undefined;
  /** Live streams (its `text/event-stream` answers) a key family may hold open at once, if it answers any. */
  liveStreams: number | undefined;
  internal: boolean;
};

type Declared = RouteConfig & {
  [RATE_LIMIT_EXTENSION]?: RateLimitPolicy;
  [SCOPE_EXTENSION]?: Scope;
  [LOST_ANSWER_EXTENSION]?: LostAnswer;
  [LIVE_STREAM_EXTENSION]?: number;
};

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
    success: successOf(route),
    lostAnswer: route[LOST_ANSWER_EXTENSION],
    liveStreams: route[LIVE_STREAM_EXTENSION],
    internal,
  };
}

function successOf(route: RouteConfig): number | undefined {
  const statuses = Object.keys(route.responses)
    .map(Number)
    .filter((status) => status >= 200 && status < 300)
    .sort((a, b) => a - b);
  return statuses.includes(201) ? 201 : statuses[0];
}

/** Every route the app declares: the public ones of its OpenAPI registry, then the internal ones. */
export function declaredRoutes(app: Pick<OpenAPIHono, "openAPIRegistry">): RouteMeta[] {
  const out: RouteMeta[] = [];
  for (const def of app.openAPIRegistry.definitions) {
    if (def.type === "route") out.push(metaOf(def.route as Declared, false));
  }
  for (const route of internalRoutes.values()) out.push(metaOf(route, true));
  return out;
}
