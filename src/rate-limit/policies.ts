/**
 * Rate-limit policies (API_CONTRACT §7): requests per 60 s sliding window. Each /v1 route
 * declares its policy (`rateLimit` in `defineRoute`, published as `x-rate-limit-policy`);
 * requests that fail authentication count against `anonymous`, per client IP.
 */
export const RATE_LIMIT_POLICIES = {
  default: 100,
  reveal: 20,
  "orgs-create": 10,
  anonymous: 60,
} as const;
export type RateLimitPolicy = keyof typeof RATE_LIMIT_POLICIES;
export const RATE_LIMIT_WINDOW_SECONDS = 60;
