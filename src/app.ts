/**
 * Builds the application: middleware order, routers, /openapi.json and /docs.
 *
 * request → request id → error boundary (onError) → [/v1, /openapi.json, /docs] CORS
 * (preflights end here) → [/v1] authenticate → rate limit → body guard → route validation (zod) → handler → service → D1.
 * Authentication comes before the body guard so that every /v1 request without a valid
 * key is 401, whatever its body; the rate limit comes before validation so that invalid
 * requests count too.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "./env";
import { ApiError, type ErrorCode, type FieldIssue, loggableError } from "./http/errors";
import { ErrorSchema, RATE_LIMIT_EXTENSION, type RateLimitPolicy } from "./http/openapi";
import { API_TAGS, registerSharedComponents } from "./http/openapi-components";
import { adminAuth, apiKeyAuth } from "./middleware/auth";
import { bodyGuard } from "./middleware/body-guard";
import { CORS_PATHS, cors } from "./middleware/cors";
import { rateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { registerDeploymentRoutes } from "./routes/deployments";
import { registerIntegrationRoutes } from "./routes/integrations";
import { registerInternalRoutes } from "./routes/internal";
import { registerMemberRoutes } from "./routes/members";
import { registerOrgRoutes } from "./routes/orgs";
import { registerProjectRoutes } from "./routes/projects";
import { registerResourceRoutes } from "./routes/resources";
import { registerVariableRoutes } from "./routes/variables";

type ZodIssueLike = { path: PropertyKey[]; message: string; code?: string; keys?: string[] };

/** zod issues → `cause: [{path, message}]`; an unknown key is reported at its own path. */
export function toFieldIssues(issues: readonly ZodIssueLike[]): FieldIssue[] {
  return issues.flatMap((issue) => {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys" && issue.keys?.length) {
      return issue.keys.map((key) => ({ path: [...base, key].join("."), message: "Unknown field." }));
    }
    return [{ path: base.join("."), message: issue.message }];
  });
}

const HTTP_EXCEPTION_CODES: Partial<Record<number, ErrorCode>> = {
  400: "bad_input",
  401: "unauthenticated",
  404: "not_found",
  408: "timeout",
  413: "bad_input",
  415: "bad_input",
};

function errorResponse(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) {
    for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
    return c.json(err.toBody(), err.status);
  }
  if (err instanceof HTTPException && HTTP_EXCEPTION_CODES[err.status]) {
    const code = HTTP_EXCEPTION_CODES[err.status] as ErrorCode;
    const api = new ApiError(code, code === "bad_input" ? "The request body must be JSON." : err.message);
    return c.json(api.toBody(), api.status as ContentfulStatusCode);
  }
  // Only the innermost message and the stack frames: the outer message of a query error
  // carries its bound parameters, which may be secrets.
  console.error(
    JSON.stringify({
      msg: "unhandled error",
      request_id: c.get("requestId"),
      error: loggableError(err),
      stack: err.stack
        ?.split("\n")
        .filter((line) => /^\s+at /.test(line))
        .join("\n"),
    }),
  );
  return c.json({ code: "internal", message: "Internal error; a retry may succeed." }, 500);
}

/** The Scalar API reference's browser bundle, copied from the npm package by scripts/docs-assets.mjs. */
export const DOCS_RENDERER_PATH = "/docs/scalar-api-reference.js";

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw new ApiError("bad_input", "The request is not valid.", toFieldIssues(result.error.issues));
      }
    },
  });

  app.use("*", requestId);
  app.onError(errorResponse);
  app.notFound((c) => c.json({ code: "not_found", message: "No such endpoint." }, 404));

  for (const path of CORS_PATHS) app.use(path, cors);
  app.use("/internal/v1/*", adminAuth, bodyGuard);
  app.use("/v1/*", apiKeyAuth, rateLimit(routePolicy(app)), bodyGuard);

  registerOrgRoutes(app);
  registerProjectRoutes(app);
  registerMemberRoutes(app);
  registerIntegrationRoutes(app);
  registerVariableRoutes(app);
  registerResourceRoutes(app);
  registerDeploymentRoutes(app);
  registerInternalRoutes(app);

  app.openAPIRegistry.register("Error", ErrorSchema);
  registerSharedComponents(app.openAPIRegistry);
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An API key of your organization (`dpk_…`).",
  });
  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Deployment Platform API",
      version: "1.0.0",
      contact: { name: "Deployment Platform API" },
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
      description:
        "The public HTTP JSON API of the deployment platform. Every `/v1` request carries an `x-api-key`. " +
        "Errors answer `{code, message, cause?}`. Lists are keyset-paginated (`after`, `limit`, `sort_by`). " +
        "Every `/v1` response carries `X-Ratelimit-Limit`, `X-Ratelimit-Remaining`, `X-Ratelimit-Reset`, " +
        "`RateLimit-Policy` and `RateLimit`; each operation's policy is its `x-rate-limit-policy`.",
    },
    servers: [
      {
        url: new URL(c.req.url).origin,
        description: "The deployment (production, staging or local) that serves this document.",
        "x-internal": false,
      },
    ],
    tags: API_TAGS,
    security: [{ ApiKey: [] }],
  }));
  // The renderer is the Worker's own static asset (wrangler.toml [assets]); no CDN, no web fonts.
  app.get(
    "/docs",
    Scalar({
      url: "/openapi.json",
      pageTitle: "Deployment Platform API",
      cdn: DOCS_RENDERER_PATH,
      withDefaultFonts: false,
      // The "Ask AI" agent calls Scalar's servers: off, so the page makes no foreign request.
      agent: { disabled: true },
    } as Parameters<typeof Scalar>[0]),
  );
  app.get(DOCS_RENDERER_PATH, async (c) => {
    const asset = await c.env.ASSETS.fetch(c.req.raw);
    return new Response(asset.body, asset); // mutable headers, for x-request-id
  });
  // The benchmark's ceiling: no auth, no limiter, no D1.
  app.get("/healthz", (c) => c.json({}));
  app.get("/", (c) =>
    c.json({ name: "deploy-platform-api", openapi: "/openapi.json", docs: "/docs", api: "/v1" }),
  );
  return app;
}

/**
 * The policy each route declares (`x-rate-limit-policy` in its definition), looked up by
 * the route that matched the request. The table is built once per isolate from the
 * OpenAPI registry; a /v1 path that matches no route counts against `default`.
 */
function routePolicy(app: OpenAPIHono<AppEnv>): (c: Context<AppEnv>) => RateLimitPolicy {
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
