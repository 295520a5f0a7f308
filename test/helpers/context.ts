/** A service context as the queue consumer and the cron build it: no identity, the test's env. */
import { env } from "cloudflare:test";
import { createServiceContext, type ServiceContext } from "../../src/context";

/** `VARIABLES_KEY_PREVIOUS` is the optional rotation secret (README "Rotating VARIABLES_KEY"). */
export function serviceContext(
  overrides: Partial<Env> & { VARIABLES_KEY_PREVIOUS?: string } = {},
): ServiceContext {
  return createServiceContext({ env: { ...env, ...overrides }, requestId: `test-${crypto.randomUUID()}` });
}
