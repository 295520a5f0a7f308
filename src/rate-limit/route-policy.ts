/**
 * The policy each route declares (`x-rate-limit-policy` in its definition), looked up by the
 * route that matched the request. The table is built once per isolate from the OpenAPI
 * registry, so the document and the limiter can never disagree; a /v1 path that matches no
 * route counts against `default`.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../env";
import { RATE_LIMIT_EXTENSION } from "../http/openapi";
import type { RateLimitPolicy } from "./policies";

export function routePolicy(app: OpenAPIHono<AppEnv>): (c: Context<AppEnv>) => RateLimitPolicy {
  let table: Map<string, RateLimitPolicy> | undefined;
  return (c) => {
    if (!table) {
      table = new Map();
      for (const def of app.openAPIRegistry.definitions) {
        if (def.type !== "route") continue;
        const route = def.route as typeof def.route & { [RATE_LIMIT_EXTENSION]?: RateLimitPolicy };
        const policy = route[RATE_LIMIT_EXTENSION];
        if (policy)
          table.set(`${route.method.toUpperCase()} ${route.path.replace(/{(\w+)}/g, ":$1")}`, policy);
      }
    }
    for (const route of matchedRoutes(c)) {
      const policy = table.get(`${route.method} ${route.path}`);
      if (policy) return policy;
    }
    return "default";
  };
}
