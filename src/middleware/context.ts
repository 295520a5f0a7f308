import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { type CallerContext, createServiceContext } from "../context";
import { UNCONSTRAINED } from "../db/session";
import type { AppEnv } from "../http/app-env";

/**
 * Builds the request's service context once (src/context.ts), right after the request id, so
 * every later middleware, handler and the error boundary use the same db handle, config and
 * logger. The auth middleware adds the caller's identity to it.
 */
export const serviceContext = createMiddleware<AppEnv>(async (c, next) => {
  c.set(
    "ctx",
    createServiceContext({
      env: c.env,
      requestId: c.get("requestId"),
      // Until the D1 session middleware opens the request's own session, only authentication
      // reads (the key lookup of a cold key), which any replica can serve.
      session: UNCONSTRAINED,
      // Looked up only when used: `app.request()` in tests may run without an execution context.
      waitUntil: (work) => c.executionCtx.waitUntil(work),
    }),
  );
  await next();
});

/**
 * Adds what the audit log records about the request (src/services/audit.ts) to its context:
 * the matched route's operationId, the client IP and user agent. Runs once the route is known.
 */
export function requestInfo(operationIdOf: (c: Context<AppEnv>) => string | undefined) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const ctx = c.get("ctx");
    c.set("ctx", {
      ...ctx,
      request: {
        operationId: operationIdOf(c),
        ip: c.req.header("cf-connecting-ip") ?? null,
        userAgent: c.req.header("user-agent")?.slice(0, 512) ?? null,
      },
    });
    await next();
  });
}

/** The context of an authenticated /v1 request (the auth middleware has set its identity). */
export function callerContext(c: Context<AppEnv>): CallerContext {
  const ctx = c.get("ctx");
  if (!ctx.identity) throw new Error("callerContext outside an authenticated /v1 route");
  return { ...ctx, identity: ctx.identity };
}
