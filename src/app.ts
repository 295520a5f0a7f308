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
import { Scalar } from "@scalar/hono-api-reference";
import { D1_BOOKMARK_PATTERN_SOURCE } from "./db/session";
import type { AppEnv } from "./http/app-env";
import { errorResponse, validationHook } from "./http/error-handler";
import { D1_BOOKMARK_PARAMETER, ErrorSchema, registerListQueryParameters } from "./http/openapi";
import { compactOpenApiDocument } from "./http/openapi-compact";
import { API_TAGS, PUBLIC_RESPONSE_HEADERS, registerSharedComponents } from "./http/openapi-components";
import { registerConditionalComponents } from "./http/openapi-conditional";
import { examplesBesideRefs } from "./http/openapi-examples";
import { routeMetaLookup } from "./http/route-meta";
import { setBounded } from "./lib/bounded-map";
import { adminAuth, apiKeyAuth } from "./middleware/auth";
import { bodyGuard } from "./middleware/body-guard";
import { requestInfo, serviceContext } from "./middleware/context";
import { CORS_PATHS, cors } from "./middleware/cors";
import { D1_BOOKMARK_HEADER, d1Session } from "./middleware/d1-session";
import { etag } from "./middleware/etag";
import { idempotency, type Reread, routeBegins } from "./middleware/idempotency";
import { rateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { requireScope } from "./middleware/scope";
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

/** The Scalar API reference's browser bundle, copied from the npm package by scripts/docs-assets.mjs. */
export const DOCS_RENDERER_PATH = "/docs/scalar-api-reference.js";

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

  app.openAPIRegistry.register("Error", ErrorSchema);
  registerSharedComponents(app.openAPIRegistry);
  registerListQueryParameters(app.openAPIRegistry);
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An API key of your organization (`dpk_…`).",
  });
  app.openAPIRegistry.registerComponent("parameters", D1_BOOKMARK_PARAMETER, {
    name: D1_BOOKMARK_HEADER,
    in: "header",
    required: false,
    description:
      "A D1 bookmark from an earlier response's `X-D1-Bookmark` (of this key or any other): a read then " +
      "sees at least everything that response had seen. Without it, a read still sees every earlier write " +
      "made with the same key. A value that is not a bookmark is `400 bad_input`.",
    schema: { type: "string", pattern: D1_BOOKMARK_PATTERN_SOURCE },
  });
  app.openAPIRegistry.registerComponent("headers", D1_BOOKMARK_PARAMETER, {
    description:
      "The latest D1 bookmark this request saw (after a write, one at least as fresh as the write). Send it " +
      "as the `X-D1-Bookmark` request header, from any key, to read at least that fresh. Present whenever " +
      "the request reached the database, and on a replayed write (`Idempotent-Replayed: true`), at least " +
      "as fresh as the write replayed.",
    schema: { type: "string", pattern: D1_BOOKMARK_PATTERN_SOURCE },
  });
  registerConditionalComponents(app.openAPIRegistry, PUBLIC_RESPONSE_HEADERS);
  // Generated once per origin in an isolate (the routes do not change while it lives), then
  // compacted (src/http/openapi-compact.ts), its identifiers' examples set beside their references
  // (src/http/openapi-examples.ts). Bounded: the origin comes from the request.
  const documents = new Map<string, unknown>();
  app.get("/openapi.json", (c) => {
    const origin = new URL(c.req.url).origin;
    let document = documents.get(origin);
    if (!document) {
      document = examplesBesideRefs(compactOpenApiDocument(app.getOpenAPI31Document(documentConfig(origin))));
      setBounded(documents, origin, document, 16);
    }
    return c.json(document);
  });
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

/** The document's top level; `servers` names the origin that serves it. */
function documentConfig(origin: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "Deployment Platform API",
      version: "1.0.0",
      contact: { name: "Deployment Platform API" },
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
      description:
        "The public HTTP JSON API of the deployment platform. Every `/v1` request carries an `x-api-key`. " +
        "Errors answer `{code, message, cause?}`. Request bodies are JSON objects in UTF-8 (a `charset` other " +
        "than `utf-8` is refused), nested at most 64 levels, with no unpaired UTF-16 surrogate in any string. " +
        "Lists are keyset-paginated (`after`, `limit`, `sort_by`). " +
        "Every `/v1` response carries `X-Ratelimit-Limit`, `X-Ratelimit-Remaining`, `X-Ratelimit-Reset`, " +
        "`RateLimit-Policy` and `RateLimit`; each operation's policy is its `x-rate-limit-policy`. " +
        "An API key may be limited to some scopes and projects: each operation names the scope it needs " +
        "as its `x-required-scope` (a key without it is `403 forbidden`), and a key restricted to some " +
        "projects sees no other project (`404`). Every change is recorded in the audit log. " +
        "Reads see every earlier write made with the same key; `X-D1-Bookmark` (response and request " +
        "header) carries that consistency to other keys.",
    },
    servers: [
      {
        url: origin,
        description: "The deployment (production, staging or local) that serves this document.",
        "x-internal": false,
      },
    ],
    tags: API_TAGS,
    security: [{ ApiKey: [] }],
  };
}
