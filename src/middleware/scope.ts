import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { isKeylessRequest } from "../http/keyless";
import type { RouteLookup } from "../http/operations";
import { grants } from "../http/scopes";

/**
 * The scope check (API_CONTRACT §15): after authentication and the rate limit, before the body
 * is read or anything is loaded. The scope is the one the matched route declares
 * (`x-required-scope`); a route that declares none (`GET /v1/api-keys/current`) and a path that
 * matches no route (answered 404 later) need none. The key's scopes ride on its identity, which
 * the isolate caches with the key, so the check costs no query.
 */
export function requireScope(routeMeta: RouteLookup) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const identity = c.get("ctx").identity;
    if (!identity) {
      // A keyless operation (src/http/keyless.ts) needs no scope: it has no key to hold one.
      if (isKeylessRequest(c)) return next();
      throw new Error("requireScope before authentication");
    }
    const needed = routeMeta(c)?.scope;
    if (needed && !grants(identity.scopes, needed)) {
      throw new ApiError(
        "forbidden",
        `This API key lacks the scope \`${needed}\` that this operation needs.`,
        {
          required_scope: needed,
        },
      );
    }
    await next();
  });
}
