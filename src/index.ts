/** Worker entry: HTTP, the EVENTS queue (and its dead-letter queue), and the rate limiter class. */
import { createApp } from "./app";
import { handleEventsBatch } from "./queue/consumer";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env) => handleEventsBatch(batch, env),
} satisfies ExportedHandler<Env>;
