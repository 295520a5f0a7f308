import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll } from "vitest";
import { loadMcpServer } from "../src/app";
import { built } from "../src/http/operations";
import { documentedRoutes } from "../src/openapi/document";
import { OPERATIONS } from "../src/routes";
import { testDatabases } from "./helpers/databases";

// Every database: the directory and each organization database (src/db/databases.ts), as
// scripts/migrate.mjs does for `npm run dev`. Idempotent: applyD1Migrations records what it applied.
await Promise.all(testDatabases().map((d1) => applyD1Migrations(d1, env.TEST_MIGRATIONS)));

// Every operation built, the document's routes and the MCP server loaded, before any test request.
// The Worker builds an operation on its first request (src/http/operations.ts), each concurrent
// first request with a load of its own (src/lib/once.ts `loadedOnce`); under the tests' module
// runner a load fetches the module from Vite, and 107 of them would slow the first file of every
// runtime. Concurrent first requests on the deployed build are `npm run check:deploy`'s.
await Promise.all([
  ...OPERATIONS.map((operation) => built(operation)),
  documentedRoutes(OPERATIONS),
  loadMcpServer(),
]);

// The test files share runtimes (vitest.config.ts `isolate: false`: each runtime runs its files in
// turn, with its own D1 and queue). A file's notification integrations must not outlive it, or the
// deliveries of its events (queued, retried, or handed to the queue again by a later file's cron
// sweep) would go out during later files, to hosts that do not resolve here. Deleting them deletes their deliveries (cascade); a
// delivery message still in the queue then finds nothing to send.
afterAll(async () => {
  await Promise.all(testDatabases().map((d1) => d1.prepare("DELETE FROM notification_integrations").run()));
});
