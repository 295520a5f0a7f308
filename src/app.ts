/**
 * Builds the application: middleware order, routers, the published document. Wiring only.
 *
 * The order, and why: the context first, so the error boundary and every service of the request
 * share one logger; authentication before anything reads the body, so every /v1 request without
 * a valid key is 401; the rate limit (which also claims an Idempotency-Key) before validation, so
 * invalid requests count too; the idempotency middleware right after it, so that what it stores
 * is the answer the client got; the route's context (its D1 session) once the limiter has handed
 * back the key's last write bookmark, and after the middleware whose parts it assembles (the
 * Idempotency-Key executing, an internal request's database); `routeBegins` last, the line past
 * which a request executes.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./http/app-env";
import { errorResponse, validationHook } from "./http/error-handler";
import { favicon } from "./http/favicon";
import { registerOperations, resolveOperation, routeOf } from "./http/operations";
import { FirstRequestRouter } from "./http/router";
import { idempotency, routeBegins } from "./idempotency/middleware";
import { loadedOnce } from "./lib/once";
import { adminAuth, apiKeyAuth } from "./middleware/auth";
import { bodyGuard } from "./middleware/body-guard";
import { requestContext, routeContext } from "./middleware/context";
import { CORS_PATHS, cors } from "./middleware/cors";
import { etag } from "./middleware/etag";
import { internalDatabase } from "./middleware/internal-database";
import { MCP_PATH, mcpAuth } from "./middleware/mcp-auth";
import { rateLimit } from "./middleware/rate-limit";
import { requireScope } from "./middleware/scope";
import { registerDocumentRoutes } from "./openapi/routes";
import { OPERATIONS } from "./routes";

export function createApp() {
  // A router that builds nothing before the first request matches (./http/router.ts).
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook, router: new FirstRequestRouter() });

  app.use("*", requestContext);
  app.onError(errorResponse);
  app.notFound((c) => c.json({ code: "not_found", message: "No such endpoint." }, 404));

  for (const path of CORS_PATHS) app.use(path, cors);
  // The operation the request matched is built (on its first request in the isolate) once the
  // caller is authenticated, and its declarations (operationId, rate-limit policy, scope) are what
  // the middleware after it reads (`routeOf`).
  const route = routeContext((c) => routeOf(c)?.action);
  app.use("/internal/v1/*", adminAuth, resolveOperation, internalDatabase, route, bodyGuard, etag);
  app.use(
    "/v1/*",
    apiKeyAuth,
    resolveOperation,
    rateLimit(routeOf),
    idempotency(app, routeOf),
    requireScope(routeOf),
    route,
    bodyGuard,
    etag,
    routeBegins,
  );

  registerOperations(app, OPERATIONS);

  registerDocumentRoutes(app, OPERATIONS);
  // The MCP server (docs/clients.md "MCP server"): the caller's key checked first, then the server loaded
  // on its first request (a new isolate loads no MCP code); its tools call the operations above
  // through this app. Not an operation of /openapi.json: a protocol endpoint, as /healthz is.
  app.use(MCP_PATH, mcpAuth);
  app.all(MCP_PATH, async (c) => (await loadMcpServer()).serveMcp(c, app));
  // Liveness, and the floor of every route's latency: no auth, no limiter, no D1.
  app.get("/healthz", (c) => c.json({}));
  app.get("/favicon.ico", favicon);
  app.get("/", (c) =>
    c.json({ name: "deploy-platform-api", openapi: "/openapi.json", docs: "/docs", api: "/v1" }),
  );
  return app;
}

/**
 * The MCP server's module, loaded once per isolate, on the first /mcp request that passed
 * authentication (concurrent first requests each load it: src/lib/once.ts `loadedOnce`);
 * test/setup.ts loads it before any request, as it builds the operations. A load that failed is
 * tried again by the next request, as an operation's build is.
 */
export const loadMcpServer: () => Promise<typeof import("./mcp/server")> = loadedOnce(
  () => import("./mcp/server"),
);
