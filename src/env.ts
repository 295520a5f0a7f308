import type { OrgRole } from "./db/schema";

/** Who is calling: resolved from the API key by the auth middleware. */
export type Identity = {
  orgId: string;
  accountId: string;
  orgRole: OrgRole;
  keyId: string;
};

/** Hono's type parameter for every router: bindings from `wrangler types`, and per-request variables. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    identity: Identity;
  };
};
