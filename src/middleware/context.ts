/**
 * The request's service context (src/context.ts), assembled here and nowhere else: these are the
 * only writers of `c.var.ctx` (test/properties/context-writer.test.ts holds every other module to
 * that). A middleware that learns a part of it hands the part over in a variable of its own
 * (src/http/app-env.ts), which `routeContext` reads. In the order the request learns its parts:
 * 1. `requestContext`, first on every path: the request's id (a well-formed incoming
 *    `x-request-id`, else a new one, echoed on every response, with `X-Content-Type-Options:
 *    nosniff`, API_CONTRACT §22) and the context every later
 *    middleware, handler and the error boundary share (one logger, config and db handle). Until
 *    the route's own session opens, only authentication reads (the key lookup of a cold key),
 *    which any replica can serve.
 * 2. `setCaller`, from the auth middleware: the caller the API key acts as (/v1), its identity and
 *    its `recheckAccess`, on its organization's database.
 * 3. `routeContext`, once the request has passed the limiter, the idempotency claim and the scope
 *    check: what the route runs with — its database (an internal request's, `internalDatabase`),
 *    its operation, client IP and user agent (the audit entry's facts, API_CONTRACT §14), its
 *    `If-Match` (§12; each write checks it with the write), the Idempotency-Key it executes under
 *    (`executingKey`, §11), and the request's own D1 session (./d1-session.ts).
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import {
  type Caller,
  type CallerContext,
  createServiceContext,
  inDatabase,
  withIdentity,
  withSession,
} from "../context";
import { UNCONSTRAINED } from "../db/session";
import type { AppEnv } from "../http/app-env";
import { etagListOf } from "../http/etag";
import { newId } from "../lib/ids";
import { keyBookmarkParts } from "../rate-limit/bookmark";
import { openRequestSession, passOnBookmark, presentedBookmark } from "./d1-session";

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : newId();
  try {
    c.set(
      "ctx",
      createServiceContext({
        env: c.env,
        requestId,
        session: UNCONSTRAINED,
        // Looked up only when used: `app.request()` in tests may run without an execution context.
        waitUntil: (work) => c.executionCtx.waitUntil(work),
      }),
    );
  } catch (err) {
    // No context without bindings: the error boundary answers, still under the request's id.
    c.header("x-request-id", requestId);
    c.header(NOSNIFF[0], NOSNIFF[1]);
    throw err;
  }
  // A client that goes away before its answer (a CI job's timeout, Ctrl-C) has the runtime tear the
  // request down at once, wherever it is: a batch committed without what follows it (a waiting
  // deployment's timer, which API_CONTRACT §31 wants deciding within 5 s; a supersede; the release
  // after an approval). Held with `waitUntil`, the request runs to its end (the runtime gives such
  // work 30 s after the client left), as it does when the client stays.
  const handled = next();
  keepAlive(c, handled);
  await handled;
  c.res.headers.set("x-request-id", requestId);
  c.res.headers.set(NOSNIFF[0], NOSNIFF[1]);
  // A HEAD runs as its GET, whose body hono then drops unread (RFC 9110 §9.3.2: none is sent). A
  // stream that GET made (a live timeline, holding one of its key's places: API_CONTRACT §33) is
  // cancelled now, which ends it and frees its place, rather than left to lapse 20 s later.
  if (c.req.method === "HEAD") c.res.body?.cancel().catch(() => undefined);
});

/** Has the runtime keep the request's context until `handled` settles; a no-op without one (`app.request()`). */
function keepAlive(c: Context<AppEnv>, handled: Promise<unknown>): void {
  let exec: Context<AppEnv>["executionCtx"];
  try {
    exec = c.executionCtx;
  } catch {
    return;
  }
  exec.waitUntil(handled.catch(() => undefined));
}

/** A browser never guesses a response's type from its bytes: a JSON error is never run as a script. */
const NOSNIFF = ["X-Content-Type-Options", "nosniff"] as const;

export function setCaller(c: Context<AppEnv>, caller: Caller): void {
  c.set("ctx", withIdentity(c.get("ctx"), caller));
}

/** `operationIdOf`: the audit entry's action for the matched route (src/http/route-meta.ts). */
export function routeContext(operationIdOf: (c: Context<AppEnv>) => string | undefined) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const internal = c.get("internalDatabase");
    // On its database before the session opens: the session, and the bookmark it is read from, are of that one.
    const ctx = internal === undefined ? await currentCaller(c) : inDatabase(c.get("ctx"), internal);
    const presented = await presentedBookmark(c, ctx);
    const session = openRequestSession(c, ctx, presented);
    const method = c.req.method;
    const ifMatch = method === "GET" || method === "HEAD" ? undefined : c.req.header("if-match");
    const executing = c.get("executingKey");
    const route = {
      ...withSession(ctx, session),
      request: {
        operationId: operationIdOf(c),
        ip: c.req.header("cf-connecting-ip") ?? null,
        userAgent: c.req.header("user-agent")?.slice(0, 512) ?? null,
      },
      ...(ifMatch === undefined ? {} : { ifMatch: etagListOf(ifMatch) }),
      ...(executing === undefined ? {} : { idempotency: executing }),
    };
    c.set("ctx", route);
    await next();
    await passOnBookmark(c, route, presented);
  });
}

/**
 * The request's context, its caller read again when the key's last write was made in another
 * database than the one its cached identity names: its organization has moved since this isolate
 * cached it (API_CONTRACT §32), and the key's own writes are in the new one.
 */
async function currentCaller(c: Context<AppEnv>) {
  const ctx = c.get("ctx");
  const stored = c.get("keyBookmark");
  if (!ctx.identity || !ctx.recheckAccess || stored === undefined) return ctx;
  const database = keyBookmarkParts(stored)?.database;
  if (!database || database === ctx.identity.database) return ctx;
  const identity = await ctx.recheckAccess({ fresh: true });
  if (!identity || identity.database === ctx.identity.database) return ctx;
  const moved = withIdentity(ctx, { identity, recheckAccess: ctx.recheckAccess });
  c.set("ctx", moved);
  return moved;
}

/** The context of an authenticated /v1 request (the auth middleware has set its caller). */
export function callerContext(c: Context<AppEnv>): CallerContext {
  const ctx = c.get("ctx");
  if (!ctx.identity || !ctx.recheckAccess) {
    throw new Error("callerContext outside an authenticated /v1 route");
  }
  return ctx as CallerContext;
}
