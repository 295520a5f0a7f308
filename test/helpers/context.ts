/** A service context as the queue consumer and the cron build it: no identity, the test's env. */
import { env } from "cloudflare:test";
import { createServiceContext, type ServiceContext } from "../../src/context";

/**
 * `VARIABLES_KEY_PREVIOUS` is the optional rotation secret (docs/operating.md "Rotating VARIABLES_KEY").
 * `asOperation`: act as a request to that operation (an internal route's), so a service that
 * writes an audit entry can be called directly.
 */
export function serviceContext(
  overrides: Partial<Env> & { VARIABLES_KEY_PREVIOUS?: string } = {},
  asOperation?: string,
): ServiceContext {
  const ctx = createServiceContext({
    env: { ...env, ...overrides },
    requestId: `test-${crypto.randomUUID()}`,
  });
  if (asOperation) ctx.request = { operationId: asOperation, ip: null, userAgent: null };
  return ctx;
}
