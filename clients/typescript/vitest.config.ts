import { defineConfig } from "vitest/config";

// The client's own tests: plain Node, against fake servers on real sockets (test/fake-api.ts).
// The client against the real Worker is the root suite's test/client.test.ts, and the packed CLI
// against `npm run dev` is scripts/check-cli.mjs.
export default defineConfig({
  test: { include: ["test/**/*.test.ts"], environment: "node", testTimeout: 15_000 },
});
