/**
 * Worker entry: HTTP, the EVENTS queue (and its dead-letter queue), the stale-event sweep on a
 * cron, and the rate limiter class.
 */
import { createApp } from "./app";
import { createDb } from "./db/client";
import { handleEventsBatch } from "./queue/consumer";
import { sweepStaleEvents } from "./webhooks/fanout";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env) => handleEventsBatch(batch, env),
  // The only place the stale-event sweep runs: one sweeper every few minutes, rather than one
  // per queue batch, keeps two fan-outs of the same event from racing.
  scheduled: async (_controller, env) => {
    await sweepStaleEvents(createDb(env.DB), env.EVENTS);
  },
} satisfies ExportedHandler<Env>;
