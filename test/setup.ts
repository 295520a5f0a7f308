import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll } from "vitest";
import { loadMcpServer } from "../src/app";
import { loadStreamDelivery } from "../src/audit-stream/object";
import { loadGate } from "../src/gate/object";
import { loadConsumer, loadCron } from "../src/handlers";
import { built } from "../src/http/operations";
import { documentedRoutes } from "../src/openapi/document";
import { loadMoveRemove, loadMoveRun, loadMoves } from "../src/org-move/object";
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
//
// The modules the Durable Objects and the queue and cron handlers load on first use (each through
// an exported `loadedOnce` loader, so that a Worker's start builds none of them) are loaded here
// too, through those loaders: afterwards no object calls `import()` again. Under the module
// runner a dynamic import is I/O of the context that makes it (the runner's lock), and an
// object's import meeting another context's (a later file's imports, another object's) failed now
// and then with "Cannot perform I/O on behalf of a different Durable Object", an unhandled
// rejection that fails the run (test/properties/preloaded-imports.test.ts holds every loader here).
await Promise.all([
  ...OPERATIONS.map((operation) => built(operation)),
  documentedRoutes(OPERATIONS),
  loadMcpServer(),
  loadStreamDelivery(),
  loadGate(),
  loadMoveRun(),
  loadMoveRemove(),
  loadMoves(),
  loadConsumer(),
  loadCron(),
]);

// The test files share runtimes (vitest.config.ts `isolate: false`: each runtime runs its files in
// turn, with its own D1 and queue). A file's notification integrations must not outlive it, or the
// deliveries of its events (queued, retried, or handed to the queue again by a later file's cron
// sweep) would go out during later files, to hosts that do not resolve here. Deleting them deletes their deliveries (cascade); a
// delivery message still in the queue then finds nothing to send.
afterAll(async () => {
  await Promise.all(testDatabases().map((d1) => d1.prepare("DELETE FROM notification_integrations").run()));
});
