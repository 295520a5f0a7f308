/**
 * The ladder's rungs inside the API's own Worker (bench/run.mjs --in-api): one isolate that
 * holds the whole API (its routes, schemas, OpenAPI registry and tables, built at load as in
 * src/index.ts) and answers both the API's paths and the ladder's (bench/ladder/worker.ts).
 *
 * The question it answers: is what separates an API read from the rung the read's own work, or
 * the isolate it runs in (a heap many times the ladder's, which every garbage collection walks)?
 * Here the rung and the read run in the same process, so the rung's figure is the limit for an
 * isolate that carries the API, and the read ÷ that rung is the request path's cost alone.
 *
 * Between the two, the climb (`/climb/<step>?id=`, CLIMB below): the rung with one more of the
 * API's own pieces at each step, called as the API calls them, so that the read's cost beyond the
 * rung can be split in one process (where two targets stand much closer than two processes do):
 *
 *   auth     → the API's service context and `authenticate` (the key's digest, the isolate's
 *              cache), then the rung (the counter object, the SELECT prepared once)
 *   limiter  → the same with the API's limiter call (`admit`, its rate-limit headers) in place of
 *              the counter
 *   service  → the same with the API's service (`getProject` on a D1 session that starts from the
 *              bookmark the limiter handed back) in place of the SELECT: a read's work without
 *              hono, its middleware, zod or the ETag
 *   app      → (`/climb/app/v1/projects/{id}`) the API's own route of that read, on an OpenAPIHono
 *              with only the layers the route needs (request id, service context, authentication,
 *              rate limit, D1 session): the read without CORS, the idempotency, scope, audit
 *              context and body-guard layers, and the ETag
 *   etag     → (`/climb/etag/…`) climb 4 and the API's ETag middleware
 *   layers   → (`/climb/layers/…`) every layer of src/app.ts in its order, on a router of
 *              the project read and list routes: the read but for the API's router of every route
 *
 * and the same for `GET /v1/projects?limit=20`, from the page rung: `limiter-page` (the API's
 * authentication and limiter call, then the page rung's SELECT and answer), `list-sql` (the API's
 * SQL text of that page on a D1 session, `raw()`, its rows answered as they come), `list-service`
 * (the API's `listProjects` on a D1 session in its place), then the route apps' list route.
 *
 * Paths are told apart without parsing the URL, at the same cost for both: the API's begin
 * with one of API_PATHS, the ladder's never do.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { type CallerContext, createServiceContext } from "../../src/context";
import { createDb } from "../../src/db/client";
import { pageRequest } from "../../src/db/pagination";
import { sessionStart, UNCONSTRAINED } from "../../src/db/session";
import type { AppEnv } from "../../src/env";
import { errorResponse, validationHook } from "../../src/http/error-handler";
import { routeMetaLookup } from "../../src/http/route-meta";
import api, { RateLimiter } from "../../src/index";
import { newId } from "../../src/lib/ids";
import { apiKeyAuth } from "../../src/middleware/auth";
import { bodyGuard } from "../../src/middleware/body-guard";
import { requestInfo, serviceContext } from "../../src/middleware/context";
import { CORS_PATHS, cors } from "../../src/middleware/cors";
import { d1Session } from "../../src/middleware/d1-session";
import { etag } from "../../src/middleware/etag";
import { idempotency } from "../../src/middleware/idempotency";
import { rateLimit, rateLimitHeaders } from "../../src/middleware/rate-limit";
import { requestId } from "../../src/middleware/request-id";
import { requireScope } from "../../src/middleware/scope";
import { RATE_LIMIT_WINDOW_SECONDS } from "../../src/rate-limit/policies";
import { routePolicy } from "../../src/rate-limit/route-policy";
import { registerGetProject } from "../../src/routes/projects/get";
import { registerListProjects } from "../../src/routes/projects/list";
import { authenticate } from "../../src/services/api-keys";
import { getProject, listProjects } from "../../src/services/projects";
import { counter, type LadderEnv, prepared } from "./rungs";
import ladder, { Counter } from "./worker";

export { Counter, RateLimiter };

const API_PATHS = ["/v1/", "/v1?", "/internal/", "/healthz", "/openapi.json", "/docs"];

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? "/" : url.slice(start);
}

type Both = Env & LadderEnv;

const CLIMB = new Set(["auth", "limiter", "service", "limiter-page", "list-sql", "list-service"]);

/**
 * The statement the API's `listProjects` prepares for the caller's first page (src/services/projects.ts):
 * its SQL text and values, taken from one call of it per isolate on a client that records what is
 * prepared, so the step reads with the API's own statement, whatever it becomes. Its values are
 * the first caller's: every bench key is of the one bench organization.
 */
let listStatement: { sql: string; params: unknown[] } | undefined;
async function apiListStatement(ctx: CallerContext): Promise<{ sql: string; params: unknown[] }> {
  if (listStatement) return listStatement;
  let seen: { sql: string; params: unknown[] } | undefined;
  const client = ctx.db.$client;
  const recording = createDb({
    prepare: (sql: string) => {
      const statement = client.prepare(sql);
      // Only `bind` is called on a compiled statement (src/db/compiled.ts `bindCompiled`).
      const bind = (...params: unknown[]) => {
        seen = { sql, params };
        return statement.bind(...params);
      };
      return { bind } as unknown as D1PreparedStatement;
    },
    batch: (statements) => client.batch(statements),
  });
  await listProjects({ ...ctx, db: recording }, pageRequest({ limit: 20, sort_by: "created_at" }));
  if (!seen) throw new Error("listProjects prepared no statement");
  listStatement = seen;
  return seen;
}

/** An OpenAPIHono at `base` with the request id and the service context; each climb adds its layers and routes. */
function routeApp(base: string) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).basePath(base);
  app.use("*", requestId, serviceContext);
  app.onError(errorResponse);
  return app;
}

// Climb 4: only the layers the route needs; climb 5: the same and the ETag (innermost, as in
// src/app.ts).
const needed = [apiKeyAuth, rateLimit(() => "default"), d1Session] as const;
const climbApp = routeApp("/climb/app");
climbApp.use("/v1/*", ...needed);
const etagApp = routeApp("/climb/etag");
etagApp.use("/v1/*", ...needed, etag);
for (const app of [climbApp, etagApp]) {
  registerGetProject(app);
  registerListProjects(app);
}

// Climb 6: every layer of src/app.ts, in its order, on a router of the read and list routes: the read
// but for the API's router of every route.
const layersApp = routeApp("/climb/layers");
for (const path of CORS_PATHS) layersApp.use(path, cors);
const routeMeta = routeMetaLookup(layersApp);
layersApp.use(
  "/v1/*",
  apiKeyAuth,
  rateLimit(routePolicy(routeMeta)),
  idempotency(() => Promise.reject(new Error("a read never replays"))),
  requireScope((c) => routeMeta(c)?.scope),
  requestInfo((c) => routeMeta(c)?.action),
  d1Session,
  bodyGuard,
  etag,
);
registerGetProject(layersApp);
registerListProjects(layersApp);

const ROUTE_APPS: [string, typeof climbApp][] = [
  ["/climb/app/", climbApp],
  ["/climb/etag/", etagApp],
  ["/climb/layers/", layersApp],
];

async function climb(step: string, request: Request, env: Both, exec: ExecutionContext): Promise<Response> {
  const url = new URL(request.url);
  const projectId = url.searchParams.get("id") ?? "";
  const ctx = createServiceContext({
    env,
    requestId: newId(),
    session: UNCONSTRAINED,
    waitUntil: (work) => exec.waitUntil(work),
  });
  const presented = request.headers.get("x-api-key") ?? undefined;
  const identity = await authenticate(ctx, presented);
  const headers: Record<string, string> = { "content-type": "application/json" };
  let bookmark: string | undefined;
  if (step === "auth") {
    await counter(env, request);
  } else {
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${identity.keyId}`));
    const result = await limiter.admit({
      policy: "default",
      limit: ctx.config.rateLimits.default,
      windowSeconds: RATE_LIMIT_WINDOW_SECONDS,
    });
    Object.assign(headers, rateLimitHeaders("default", result.decision));
    bookmark = result.bookmark;
  }
  if (step === "list-service") {
    const session = ctx.openSession(sessionStart("GET", bookmark));
    const page = await listProjects(
      { ...ctx, db: session.db, session, identity },
      pageRequest({ limit: 20, sort_by: "created_at" }),
    );
    headers["x-d1-bookmark"] = session.bookmark() ?? "";
    return new Response(JSON.stringify(page), { headers });
  }
  if (step === "list-sql") {
    // The API's D1 read of the page (its SQL text, prepared on a D1 session, `raw()`), without
    // its decoding, shaping, cursor or JSON of records: the rows answered as they come.
    const session = ctx.openSession(sessionStart("GET", bookmark));
    const { sql, params } = await apiListStatement({ ...ctx, db: session.db, session, identity });
    const rows = await session.db.$client
      .prepare(sql)
      .bind(...params)
      .raw();
    headers["x-d1-bookmark"] = session.bookmark() ?? "";
    return new Response(JSON.stringify({ data: rows.slice(0, 20), has_more: rows.length > 20 }), { headers });
  }
  if (step === "limiter-page") {
    // The page rung's SELECT (bench/ladder/rungs.ts) and answer, as bench/ladder/worker.ts gives them.
    const { results } = await prepared(env.DB).page.bind(env.ORG_ID).all();
    return new Response(JSON.stringify({ data: results.slice(0, 20), has_more: results.length > 20 }), {
      headers,
    });
  }
  if (step === "service") {
    const session = ctx.openSession(sessionStart("GET", bookmark));
    const record = await getProject({ ...ctx, db: session.db, session, identity }, projectId);
    headers["x-d1-bookmark"] = session.bookmark() ?? "";
    return new Response(JSON.stringify(record), { headers });
  }
  const row = await prepared(env.DB).project.bind(projectId).first();
  return new Response(JSON.stringify(row), { status: row ? 200 : 404, headers });
}

export default {
  fetch(request: Request, env: Both, ctx: ExecutionContext) {
    const path = pathOf(request.url);
    if (path === "/v1" || API_PATHS.some((prefix) => path.startsWith(prefix))) {
      return api.fetch(request, env, ctx);
    }
    for (const [prefix, app] of ROUTE_APPS) if (path.startsWith(prefix)) return app.fetch(request, env, ctx);
    if (path.startsWith("/climb/")) {
      const step = path.slice("/climb/".length, path.indexOf("?") < 0 ? undefined : path.indexOf("?"));
      if (CLIMB.has(step)) return climb(step, request, env, ctx);
    }
    return ladder.fetch!(request as Parameters<NonNullable<typeof ladder.fetch>>[0], env, ctx);
  },
  queue: api.queue,
  scheduled: api.scheduled,
};
