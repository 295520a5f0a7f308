/**
 * Builds the application: middleware order, routers, /openapi.json and /docs.
 *
 * request → request id → service context → error boundary (onError) → [/v1] authenticate →
 * rate limit (+ Idempotency-Key claim) → idempotency → body guard → etag → route validation
 * (zod) → handler → service → D1.
 * The service context (src/context.ts) is built once, before anything can fail, so the error
 * boundary's log line and every service of the request share its logger and db handle.
 * Authentication comes before the body guard so that every /v1 request without a valid
 * key is 401, whatever its body; the rate limit comes before validation so that invalid
 * requests count too. The idempotency middleware sits outside the body guard and the etag
 * middleware so that the answer it stores is the one the client got, 400s and ETag included.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv } from "./env";
import { errorResponse, validationHook } from "./http/error-handler";
import { PUBLIC_RESPONSE_HEADERS } from "./http/openapi";
import { registerConditionalComponents } from "./http/openapi-conditional";
import { adminAuth, apiKeyAuth } from "./middleware/auth";
import { bodyGuard } from "./middleware/body-guard";
import { serviceContext } from "./middleware/context";
import { etag } from "./middleware/etag";
import { idempotency, type Reread } from "./middleware/idempotency";
import { rateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { routePolicy } from "./rate-limit/route-policy";
import { registerDeploymentRoutes } from "./routes/deployments";
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

  app.use("/internal/v1/*", adminAuth, bodyGuard);
  // An answer stored by reference is re-read as a GET of the record, by the same key.
  const reread: Reread = (c, path) =>
    app.request(
      path,
      { headers: { "x-api-key": c.req.header("x-api-key") ?? "", accept: "application/json" } },
      c.env,
      c.executionCtx,
    );
  app.use("/v1/*", apiKeyAuth, rateLimit(routePolicy(app)), idempotency(reread), bodyGuard, etag);

  registerOrgRoutes(app);
  registerProjectRoutes(app);
  registerMemberRoutes(app);
  registerIntegrationRoutes(app);
  registerVariableRoutes(app);
  registerResourceRoutes(app);
  registerDeploymentRoutes(app);
  registerInternalRoutes(app);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An API key of your organization (`dpk_…`).",
  });
  registerConditionalComponents(app.openAPIRegistry, PUBLIC_RESPONSE_HEADERS);
  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Deployment Platform API",
      version: "1.0.0",
      description:
        "The public HTTP JSON API of the deployment platform. Every `/v1` request carries an `x-api-key`. " +
        "Errors answer `{code, message, cause?}`. Request bodies are JSON objects in UTF-8 (a `charset` other " +
        "than `utf-8` is refused), nested at most 64 levels, with no unpaired UTF-16 surrogate in any string. " +
        "Lists are keyset-paginated (`after`, `limit`, `sort_by`). " +
        "Every `/v1` response carries `X-Ratelimit-Limit`, `X-Ratelimit-Remaining`, `X-Ratelimit-Reset`, " +
        "`RateLimit-Policy` and `RateLimit`; each operation's policy is its `x-rate-limit-policy`.",
    },
    servers: [{ url: new URL(c.req.url).origin }],
    security: [{ ApiKey: [] }],
  }));
  app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: "Deployment Platform API" }));
  // The benchmark's ceiling: no auth, no limiter, no D1.
  app.get("/healthz", (c) => c.json({}));
  app.get("/", (c) =>
    c.json({ name: "deploy-platform-api", openapi: "/openapi.json", docs: "/docs", api: "/v1" }),
  );
  return app;
}
