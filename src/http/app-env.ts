import type { ServiceContext } from "../context";
import type { Admission } from "../rate-limit/limiter";

export type { Identity } from "../context";

/** Hono's type parameter for every router: bindings from `wrangler types`, and per-request variables. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The service context (src/context.ts), built by the context middleware; with `identity` on /v1. */
    ctx: ServiceContext;
    /** The latest D1 bookmark of the caller's key's writes, from its limiter object (/v1 only). */
    keyBookmark?: string;
    /**
     * The raw request body, read once (bounded) by whichever needs it first: the rate-limit
     * middleware when it must hash it for an Idempotency-Key, else the body guard.
     */
    rawBody?: Promise<Uint8Array>;
    /** The Idempotency-Key claim made with the rate-limit decision (API_CONTRACT §11). */
    admission?: Admission;
    /**
     * Set once the request has passed every check of its form (scope, headers, the body guard)
     * and reaches its route: from here it executes, and a claimed Idempotency-Key keeps its answer.
     */
    executing?: true;
  };
};
