import { defineConfig } from "vitest/config";

// The client's own tests: plain Node, against fake servers on real sockets (test/fake-api.ts).
// The client against the real Worker is the root suite's test/client.test.ts, and the packed CLI
// against `npm run dev` is scripts/check-cli.mjs.
//
// `isolate: false`: the files share their worker processes instead of one new process per file (14
// of them, ~0.2 s each to start, most of the run's CPU: 11.5 CPU-s against 4.2 with the same 87
// tests, `/usr/bin/time npx vitest run` and `--no-isolate` interleaved). No test mocks a module or
// changes the process's state (`vi.mock`, `vi.stub*`, `process.env`, `process.chdir`): each
// starts its own fake server and reads what it passes in.
export default defineConfig({
  test: { include: ["test/**/*.test.ts"], environment: "node", testTimeout: 15_000, isolate: false },
});
