import type { ServiceContext } from "./context";

export type { Identity } from "./context";

/** Hono's type parameter for every router: bindings from `wrangler types`, and per-request variables. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The service context (src/context.ts), built by the context middleware; with `identity` on /v1. */
    ctx: ServiceContext;
    /** The latest D1 bookmark of the caller's key's writes, from its limiter object (/v1 only). */
    keyBookmark?: string;
  };
};
