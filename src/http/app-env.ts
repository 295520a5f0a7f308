/**
 * Hono's type parameter for every router: the bindings from `wrangler types`, and what a request
 * carries from one middleware to the next. The idempotency claim declares its own variable beside
 * itself (src/idempotency/claim.ts). A middleware that learns a part of the service context hands
 * it over here, and src/middleware/context.ts alone puts it into `ctx`.
 */
import type { ExecutingKey, ServiceContext } from "../context";
import type { StreamPlace } from "../rate-limit/stream-place";
import type { RouteMeta } from "./route-meta";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    /** The request's service context, assembled by src/middleware/context.ts alone. */
    ctx: ServiceContext;
    /**
     * The database an internal request runs on: the one its path's first id lives in
     * (src/middleware/internal-database.ts). Absent: the directory. The route's context runs on it.
     */
    internalDatabase?: string;
    /**
     * The Idempotency-Key a /v1 write executes under (src/idempotency/middleware.ts), which the
     * route's context carries as `idempotency` so that the write's audit entry commits the key.
     */
    executingKey?: ExecutingKey;
    /**
     * The latest D1 bookmark of the caller's key's writes, which its limiter object answers with
     * the rate-limit decision (/v1 only): where the request's D1 session starts reading.
     */
    keyBookmark?: string;
    /**
     * A live stream's place among its key family's (API_CONTRACT §33), granted with the rate-limit
     * decision: the stream holds it while it lasts (src/rate-limit/stream-place.ts).
     */
    streamPlace?: StreamPlace;
    /** The declarations of the operation the request matched (src/http/operations.ts). */
    operation?: RouteMeta;
    /** The raw request body, read once (src/http/raw-body.ts). */
    rawBody?: Promise<Uint8Array>;
  };
};
