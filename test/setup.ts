import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll } from "vitest";

// Idempotent: applyD1Migrations records what it applied.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// The test files share one runtime (vitest.config.ts `isolate: false`): one D1, one queue. A
// file's notification integrations must not outlive it, or the deliveries of its events (queued,
// retried, or handed to the queue again by a later file's cron sweep) would go out during later
// files, to hosts that do not resolve here. Deleting them deletes their deliveries (cascade); a
// delivery message still in the queue then finds nothing to send.
afterAll(async () => {
  await env.DB.prepare("DELETE FROM notification_integrations").run();
});
