declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    FUZZ_RUNS: string;
    FUZZ_SEED: string;
    /** Rate-limit overrides of the test configuration (vitest.config.ts); unset in production. */
    RATE_LIMITS?: string;
  }
}
