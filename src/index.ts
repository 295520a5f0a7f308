/**
 * Worker entry: HTTP, the EVENTS queue (and its dead-letter queue), the stale-event sweep on a
 * cron, and the rate limiter class. Every entry point builds the same service context
 * (src/context.ts) and calls the same services.
 */
import { createApp } from "./app";
import { handleEventsBatch } from "./consumer";
import { createServiceContext } from "./context";
import { newId } from "./lib/ids";
import { sweepStaleEvents } from "./services/fanout";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env, exec?: ExecutionContext) => handleEventsBatch(batch, env, exec),
  // The only place the stale-event sweep runs: one sweeper every few minutes, rather than one
  // per queue batch, keeps two fan-outs of the same event from racing.
  scheduled: async (_controller, env, exec?: ExecutionContext) => {
    const waitUntil = exec ? (work: Promise<unknown>) => exec.waitUntil(work) : undefined;
    await sweepStaleEvents(
      createServiceContext({ env, requestId: newId(), ...(waitUntil ? { waitUntil } : {}) }),
    );
  },
} satisfies ExportedHandler<Env>;
