/**
 * Hono's type parameter for every router: the bindings from `wrangler types`, and what a request
 * carries from one middleware to the next. The idempotency middleware declares its own variable
 * beside itself (src/idempotency/claim.ts).
 */
import type { ServiceContext } from "../context";
import type { RouteMeta } from "./route-meta";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    /** The request's service context, assembled by src/middleware/context.ts alone. */
    ctx: ServiceContext;
    /**
     * The latest D1 bookmark of the caller's key's writes, which its limiter object answers with
     * the rate-limit decision (/v1 only): where the request's D1 session starts reading.
     */
    keyBookmark?: string;
    /** The declarations of the operation the request matched (src/http/operations.ts). */
    operation?: RouteMeta;
    /** The raw request body, read once (src/http/raw-body.ts). */
    rawBody?: Promise<Uint8Array>;
  };
};
