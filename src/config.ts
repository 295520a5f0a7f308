/**
 * Settings read from the Worker's environment, parsed once per service context (src/context.ts),
 * and the rate-limit policies they tune.
 */
import type { VariableKeySecrets } from "./crypto/variables";
import { orgDatabasesOf } from "./db/databases";

/**
 * Rate-limit policies (API_CONTRACT §7): requests per 60 s sliding window. Each /v1 route
 * declares its policy (`rateLimit` in `defineRoute`, published as `x-rate-limit-policy`);
 * requests that fail authentication count against `anonymous`, per client IP. The limiter
 * object is told the limit with every call, so these numbers live here, with the settings
 * that may raise them.
 */
export const RATE_LIMIT_POLICIES = {
  default: 100,
  reveal: 20,
  "orgs-create": 10,
  "keys-create": 10,
  anonymous: 60,
  // API_CONTRACT §27: every token exchange, answered or refused, per client address (as `anonymous`).
  "oidc-exchange": 60,
} as const;
export type RateLimitPolicy = keyof typeof RATE_LIMIT_POLICIES;
export const RATE_LIMIT_WINDOW_SECONDS = 60;

export type Config = {
  /** ALLOW_INSECURE_WEBHOOKS: http:// and private hosts as webhook URLs (local development only). */
  allowInsecureWebhooks: boolean;
  /**
   * ALLOW_INSECURE_OIDC_ISSUERS: http:// and loopback OpenID Connect issuers (API_CONTRACT §1, §27),
   * for an issuer on the developer's machine or the tests' own; never set by a deployed environment
   * (`npm run check:deploy` refuses one that does).
   */
  allowInsecureOidcIssuers: boolean;
  /** VARIABLES_KEY and, while rotating, VARIABLES_KEY_PREVIOUS. */
  variableKeys: VariableKeySecrets;
  /**
   * Requests per window of each rate-limit policy: the production numbers, unless RATE_LIMITS
   * (a JSON object of policy → limit, set only by the test configuration) raises some of them.
   */
  rateLimits: Record<RateLimitPolicy, number>;
  /**
   * How long a request body may take to arrive whole (src/http/raw-body.ts): BODY_TIMEOUT_MS, unless
   * REQUEST_BODY_TIMEOUT_MS (a positive integer, set only by tests that trickle a body) replaces it.
   */
  bodyTimeoutMs: number;
  /**
   * How often, at most, a live stream checks again that its key and its access still hold, before
   * it sends and by a timer after a change of its deployment (src/services/deployments/follow.ts):
   * STREAM_RECHECK_MS, unless STREAM_RECHECK_MS_OVERRIDE (a positive integer, set only by tests)
   * replaces it.
   */
  streamRecheckMs: number;
  /**
   * How long a live stream lasts (src/routes/deployments/getDeploymentTimeline.ts): STREAM_MAX_MS,
   * unless STREAM_MAX_MS_OVERRIDE (a positive integer, set only by tests) replaces it.
   */
  streamMaxMs: number;
  /**
   * How long a live stream's place among its key family's lasts unless renewed
   * (src/rate-limit/stream-leases.ts; renewed every quarter of it): STREAM_LEASE_MS, unless
   * STREAM_LEASE_MS_OVERRIDE (a positive integer, set only by tests) replaces it.
   */
  streamLeaseMs: number;
  /** ORG_DATABASES: the bindings of every organization database (src/db/databases.ts). */
  orgDatabases: readonly string[];
  /**
   * NEW_ORG_DATABASES: where the internal API places new organizations (by a hash of their id),
   * each one of `orgDatabases`; default all of them, so a database that is full can be kept from
   * taking more. An organization a key creates (`POST /v1/orgs`) goes beside the key's own, in one
   * transaction with its audit entry (src/services/orgs/orgs.ts).
   */
  newOrgDatabases: readonly string[];
};

/** A request body arrives whole within 30 s of the service starting to read it, else `408 timeout`. */
export const BODY_TIMEOUT_MS = 30_000;

/**
 * A revoked key stops working everywhere within 60 s (API_CONTRACT §5): a key's lookup is cached
 * for up to 30 s, so a stream that checks every 30 s sends nothing more than 60 s after it.
 */
export const STREAM_RECHECK_MS = 30_000;

/** API_CONTRACT §19: a stream lasts at most 15 minutes. */
export const STREAM_MAX_MS = 15 * 60_000;

/** API_CONTRACT §33: live streams open at once per key family; another is `429 rate`. */
export const LIVE_STREAMS_PER_FAMILY = 10;

/**
 * API_CONTRACT §33: a stream frees its place within 20 s of its client going away. It gives the
 * place back when it ends; one whose isolate died, or whose release was lost, holds it until its
 * lease lapses, at most this long after its last renewal.
 */
export const STREAM_LEASE_MS = 20_000;

/** Bindings read here that `wrangler types` does not list: optional secrets and test settings. */
type OptionalBindings = {
  VARIABLES_KEY_PREVIOUS?: string;
  RATE_LIMITS?: string;
  REQUEST_BODY_TIMEOUT_MS?: string;
  STREAM_RECHECK_MS_OVERRIDE?: string;
  STREAM_MAX_MS_OVERRIDE?: string;
  STREAM_LEASE_MS_OVERRIDE?: string;
  NEW_ORG_DATABASES?: string;
};

export function parseConfig(env: Env): Config {
  const optional = env as Env & OptionalBindings;
  return {
    allowInsecureWebhooks: env.ALLOW_INSECURE_WEBHOOKS === "true",
    allowInsecureOidcIssuers: env.ALLOW_INSECURE_OIDC_ISSUERS === "true",
    variableKeys: { current: optional.VARIABLES_KEY, previous: optional.VARIABLES_KEY_PREVIOUS },
    rateLimits: rateLimitsOf(optional.RATE_LIMITS),
    bodyTimeoutMs: positiveInteger(optional.REQUEST_BODY_TIMEOUT_MS) ?? BODY_TIMEOUT_MS,
    streamRecheckMs: positiveInteger(optional.STREAM_RECHECK_MS_OVERRIDE) ?? STREAM_RECHECK_MS,
    streamMaxMs: positiveInteger(optional.STREAM_MAX_MS_OVERRIDE) ?? STREAM_MAX_MS,
    streamLeaseMs: positiveInteger(optional.STREAM_LEASE_MS_OVERRIDE) ?? STREAM_LEASE_MS,
    ...databasesOf(optional.ORG_DATABASES, optional.NEW_ORG_DATABASES),
  };
}

const databasesCache = new Map<string, Pick<Config, "orgDatabases" | "newOrgDatabases">>();

function databasesOf(all: string | undefined, placing: string | undefined) {
  const cacheKey = `${all ?? ""}|${placing ?? ""}`;
  let cached = databasesCache.get(cacheKey);
  if (!cached) {
    const orgDatabases = orgDatabasesOf(all);
    const newOrgDatabases = placing === undefined ? orgDatabases : orgDatabasesOf(placing);
    const stray = newOrgDatabases.find((name) => !orgDatabases.includes(name));
    if (stray) throw new Error(`NEW_ORG_DATABASES names ${stray}, which ORG_DATABASES does not`);
    cached = { orgDatabases, newOrgDatabases };
    databasesCache.set(cacheKey, cached);
  }
  return cached;
}

const positiveInteger = (text: string | undefined): number | undefined =>
  text && /^[1-9][0-9]{0,8}$/.test(text) ? Number(text) : undefined;

const overridesCache = new Map<string, Record<RateLimitPolicy, number>>();

/** The production limits with RATE_LIMITS' overrides; anything but a positive integer of a known policy is ignored. */
function rateLimitsOf(overrides: string | undefined): Record<RateLimitPolicy, number> {
  if (!overrides) return RATE_LIMIT_POLICIES;
  const cached = overridesCache.get(overrides);
  if (cached) return cached;
  const limits: Record<RateLimitPolicy, number> = { ...RATE_LIMIT_POLICIES };
  let parsed: unknown;
  try {
    parsed = JSON.parse(overrides);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === "object" && parsed !== null) {
    for (const [policy, limit] of Object.entries(parsed)) {
      if (Object.hasOwn(RATE_LIMIT_POLICIES, policy) && Number.isSafeInteger(limit) && limit > 0) {
        limits[policy as RateLimitPolicy] = limit;
      }
    }
  }
  overridesCache.set(overrides, limits);
  return limits;
}
