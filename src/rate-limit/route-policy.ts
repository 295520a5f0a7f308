/**
 * The policy each route declares (`x-rate-limit-policy` in its definition), looked up by the
 * route that matched the request in the one table of route declarations (src/http/route-meta.ts),
 * built from the OpenAPI registry, so the document and the limiter can never disagree; a /v1
 * path that matches no route counts against `default`.
 */
import type { Context } from "hono";
import type { RateLimitPolicy } from "../config";
import type { AppEnv } from "../http/app-env";
import type { RouteMeta } from "../http/route-meta";

export function routePolicy(
  routeMeta: (c: Context<AppEnv>) => RouteMeta | undefined,
): (c: Context<AppEnv>) => RateLimitPolicy {
  return (c) => routeMeta(c)?.policy ?? "default";
}
