/**
 * Operations built on their first request, not when the Worker starts. Evaluating every
 * operation's zod schemas, `.openapi()` metadata and validators before serving any one was most
 * of a new isolate's start; deferring them took it from about 2.1× the floor Worker's startup to
 * about 1.2× (bench/README.md, "Startup"; `npm run check:deploy` keeps them out of the start).
 *
 * The app knows each operation only by method, path and a loader of its `register`:
 * `() => import("./routes/projects/_read").then((g) => g.getProject)`, its folder's group of reads
 * (or of writes), whose modules each declare their route only when registered (scripts/routes-index.ts).
 * The deployed build (scripts/build.mjs) makes such a group a chunk that the loader's first call
 * imports; wrangler's one bundle (`npm run dev`) keeps it in the bundle and evaluates it then; the
 * tests' module runner (Vite's) loads it then too.
 * On an operation's first request, `built` loads its module and lets it register, as it always
 * has (`app.openapi(route, handler)`), on a small app of its own; the handlers that registration
 * made (the route's middleware, its validators, its handler) are then the operation's chain, run
 * in place of the placeholder registered here, and the definition's declarations (its
 * operationId, rate-limit policy, scope) are its `RouteMeta`. Both are kept for the isolate's
 * life. `/openapi.json` loads every operation (`documentedApp`).
 *
 * A loader whose module declares another method or path than its entry is an error at first use,
 * and `test/properties/operations.test.ts` loads every entry, so a mismatch never ships.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler, Next } from "hono";
import { matchedRoutes } from "hono/route";
import { loadedOncePer } from "../lib/once";
import type { AppEnv } from "./app-env";
import { validationHook } from "./error-handler";
import { declaredRoutes, type RouteMeta } from "./route-meta";

/** What an operation's module exports: the function that registers its route on an app. */
export type Register = (app: OpenAPIHono<AppEnv>) => void;

export type Operation = {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** As OpenAPI spells it: `/v1/projects/{project_id}`. */
  path: string;
  load: () => Promise<Register>;
};

export const op = (method: Operation["method"], path: string, load: Operation["load"]): Operation => ({
  method,
  path,
  load,
});

type Built = { chain: MiddlewareHandler<AppEnv>[]; meta: RouteMeta };

/** Hono spells a path's parameters `:name`. */
const honoPath = (path: string) => path.replace(/{(\w+)}/g, ":$1");

/**
 * An operation built (its module loaded, its route registered on an app of its own), kept per
 * operation for the isolate's life (module state: every app of the isolate shares it). Concurrent
 * first requests each load it, never awaiting another request's load (src/lib/once.ts
 * `loadedOnce`); the first build made is kept. A load that failed (a module that throws as it is
 * evaluated, a route that does not match its entry) answers 500 and is tried again by the next
 * request.
 */
export const built: (operation: Operation) => Promise<Built> = loadedOncePer(async (operation: Operation) => {
  const register = await operation.load();
  const own = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  register(own);
  const method = operation.method.toUpperCase();
  const meta = declaredRoutes(own).find((m) => m.method === method && m.path === operation.path);
  const chain = own.routes
    .filter((r) => r.method === method && r.path === honoPath(operation.path))
    .map((r) => r.handler as MiddlewareHandler<AppEnv>);
  if (!meta || chain.length === 0) {
    throw new Error(`the module of ${method} ${operation.path} declares no such route`);
  }
  return { chain, meta };
});

/**
 * Runs an operation's chain as Hono's own `compose` would (a handler's returned Response becomes
 * `c.res` unless one is already final); an error propagates to the app's, which answers it.
 */
async function run(chain: MiddlewareHandler<AppEnv>[], c: Context<AppEnv>, next: Next): Promise<void> {
  let index = -1;
  const dispatch = async (i: number): Promise<void> => {
    // As compose does: a middleware calling next() twice would run the rest (a write) twice.
    if (i <= index) throw new Error("next() called multiple times");
    index = i;
    const handler = chain[i];
    if (!handler) return next();
    const res = await handler(c, () => dispatch(i + 1));
    if (res instanceof Response && !c.finalized) c.res = res;
  };
  await dispatch(0);
}

/** The placeholder routes' handlers, to the operation each stands for. */
const operationOf = new WeakMap<object, Operation>();

/** Registers every operation by method and path; each is built on its first request. */
export function registerOperations(app: OpenAPIHono<AppEnv>, operations: readonly Operation[]): void {
  for (const operation of operations) {
    const handler: MiddlewareHandler<AppEnv> = async (c, next) =>
      run((await built(operation)).chain, c, next);
    operationOf.set(handler, operation);
    app.on(operation.method.toUpperCase(), honoPath(operation.path), handler);
  }
}

/**
 * Middleware: builds the operation the request matched (if any) and keeps its declarations for the
 * middleware after it (`routeOf`). Where several match (`/v1/api-keys/current` and `/{id}`), the
 * first registered, which is the one that answers.
 */
export const resolveOperation: MiddlewareHandler<AppEnv> = async (c, next) => {
  for (const route of matchedRoutes(c)) {
    const operation = operationOf.get(route.handler);
    if (operation) {
      c.set("operation", (await built(operation)).meta);
      break;
    }
  }
  await next();
};

/** The declarations of the route a request matched, if any. */
export type RouteLookup = (c: Context<AppEnv>) => RouteMeta | undefined;

/** The declarations of the operation `resolveOperation` found for the request, if any. */
export const routeOf: RouteLookup = (c) => c.get("operation");

/**
 * Every operation registered on one new app, for what reads them all: the published document (its
 * registry; src/openapi/document.ts keeps it for the isolate) and the tests that walk every route.
 */
export async function documentedApp(operations: readonly Operation[]): Promise<OpenAPIHono<AppEnv>> {
  const registers = await Promise.all(operations.map((o) => o.load()));
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  for (const register of registers) register(app);
  return app;
}
