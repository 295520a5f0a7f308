/**
 * Builds the application: middleware order, routers, /openapi.json and /docs.
 *
 * request → request id → service context → error boundary (onError) → [/v1, /openapi.json, /docs]
 * CORS (preflights end here) → [/v1] authenticate → rate limit (+ Idempotency-Key claim) →
 * idempotency → scope → D1 session → body guard → etag → route begins → route validation (zod) →
 * handler → service → D1.
 * The service context (src/context.ts) is built once, before anything can fail, so the error
 * boundary's log line and every service of the request share its logger and db handle.
 * Authentication comes before the body guard so that every /v1 request without a valid
 * key is 401, whatever its body; the rate limit comes before validation so that invalid
 * requests count too. The D1 session (src/middleware/d1-session.ts) is opened once the limiter
 * has handed back the key's last write bookmark; authentication's own key lookup runs on a
 * replica session of its own (src/services/api-keys.ts). The idempotency middleware sits right
 * after the rate limit that claimed the key, outside the scope check, the body guard and the
 * etag middleware, so that the answer it stores is the one the client got (the route's own 400s
 * and the ETag included) and a replay executes nothing, opens no D1 session and writes no audit
 * entry. A request refused before its route begins (scope, malformed headers, the body guard)
 * releases the key instead, as the over-large body and 401s and 429s never claim one (§11, §17).
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./http/app-env";
import { errorResponse, validationHook } from "./http/error-handler";
import { routeMetaLookup } from "./http/route-meta";
import { adminAuth, apiKeyAuth } from "./middleware/auth";
import { bodyGuard } from "./middleware/body-guard";
import { requestInfo, serviceContext } from "./middleware/context";
import { CORS_PATHS, cors } from "./middleware/cors";
import { d1Session } from "./middleware/d1-session";
import { etag } from "./middleware/etag";
import { idempotency, type Reread, routeBegins } from "./middleware/idempotency";
import { rateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { requireScope } from "./middleware/scope";
import { registerDocumentComponents, registerDocumentRoutes } from "./openapi/document";
import { routePolicy } from "./rate-limit/route-policy";
import { registerApiKeyRoutes } from "./routes/api-keys";
import { registerAuditLogRoutes } from "./routes/audit-log";
import { registerDeploymentRoutes } from "./routes/deployments";
import { registerEventRoutes } from "./routes/events";
import { registerIntegrationRoutes } from "./routes/integrations";
import { registerInternalRoutes } from "./routes/internal";
import { registerMemberRoutes } from "./routes/members";
import { registerOrgRoutes } from "./routes/orgs";
import { registerProjectRoutes } from "./routes/projects";
import { registerResourceRoutes } from "./routes/resources";
import { registerVariableRoutes } from "./routes/variables";

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use("*", requestId, serviceContext);
  app.onError(errorResponse);
  app.notFound((c) => c.json({ code: "not_found", message: "No such endpoint." }, 404));

  for (const path of CORS_PATHS) app.use(path, cors);
  // Each route's declarations (operationId, rate-limit policy, scope), read from the route
  // definitions once per isolate and looked up by the route the request matched.
  const routeMeta = routeMetaLookup(app);
  const info = requestInfo((c) => routeMeta(c)?.action);
  app.use("/internal/v1/*", adminAuth, info, d1Session, bodyGuard, etag);
  // An answer stored by reference is re-read as a GET of the record, by the same key.
  const reread: Reread = (c, path) =>
    app.request(
      path,
      { headers: { "x-api-key": c.req.header("x-api-key") ?? "", accept: "application/json" } },
      c.env,
      c.executionCtx,
    );
  app.use(
    "/v1/*",
    apiKeyAuth,
    rateLimit(routePolicy(routeMeta)),
    idempotency(reread),
    requireScope((c) => routeMeta(c)?.scope),
    info,
    d1Session,
    bodyGuard,
    etag,
    routeBegins,
  );

  registerOrgRoutes(app);
  registerProjectRoutes(app);
  registerMemberRoutes(app);
  registerIntegrationRoutes(app);
  registerEventRoutes(app);
  registerVariableRoutes(app);
  registerResourceRoutes(app);
  registerDeploymentRoutes(app);
  registerApiKeyRoutes(app);
  registerAuditLogRoutes(app);
  registerInternalRoutes(app);

  registerDocumentComponents(app.openAPIRegistry);
  registerDocumentRoutes(app);
  // The benchmark's ceiling: no auth, no limiter, no D1.
  app.get("/healthz", (c) => c.json({}));
  app.get("/", (c) =>
    c.json({ name: "deploy-platform-api", openapi: "/openapi.json", docs: "/docs", api: "/v1" }),
  );
  return app;
}
