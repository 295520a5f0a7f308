/**
 * Worker entry: HTTP, the EVENTS queue (and its dead-letter queue), the sweeps of stale events and
 * stuck deliveries on a cron, and the Durable Object classes (the rate limiter, the delivery
 * lanes, the deployment feeds, the environment gates). Every entry point builds the same service
 * context (src/context.ts) and calls the same services.
 *
 * A new isolate evaluates what HTTP needs before its first request (the app: its middleware and
 * the table of operations, each built on its first request, src/http/operations.ts); the queue
 * consumer (src/consumer.ts) and the cron (src/cron.ts) are loaded on their first batch or run,
 * so that their services are no part of every start (bench/README.md, "Startup").
 */
import { createApp } from "./app";
import { loadConsumer, loadCron } from "./handlers";

export { AuditStream } from "./audit-stream/object";
export { DeliveryLane } from "./delivery-lane/object";
export { DeploymentFeed } from "./feed/object";
export { EnvironmentGate } from "./gate/object";
export { OrgMove } from "./org-move/object";
export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: async (batch, env, exec?: ExecutionContext) =>
    (await loadConsumer()).handleEventsBatch(batch, env, exec),
  scheduled: async (controller, env, exec?: ExecutionContext) =>
    (await loadCron()).runScheduled(controller, env, exec),
} satisfies ExportedHandler<Env>;
