/**
 * Every module that a Durable Object, the queue handler or the cron handler loads on first use goes
 * through an exported `loadedOnce` loader, never a bare `await import(…)`, and test/setup.ts calls
 * every such loader before any test runs: under the tests' module runner a dynamic import is I/O of
 * the context that makes it, and an object's import meeting another context's failed runs now and
 * then with "Cannot perform I/O on behalf of a different Durable Object". Once loaded, a loader
 * imports nothing again. A new lazy import in an object is held to this without being named here.
 * The sources are read by Vite's import.meta.glob (as raw text).
 */
import { describe, expect, it } from "vitest";

const sources = import.meta.glob<string>(
  ["../../src/handlers.ts", "../../src/index.ts", "../../src/*/object.ts"],
  {
    query: "?raw",
    import: "default",
    eager: true,
  },
);
const setup = Object.values(
  import.meta.glob<string>("../setup.ts", { query: "?raw", import: "default", eager: true }),
)[0];

describe("modules loaded on first use by objects and handlers", () => {
  it("are loaded through exported loaders only, each called by test/setup.ts", () => {
    const loaders: string[] = [];
    for (const [file, text] of Object.entries(sources)) {
      const bare = text.split("\n").filter((line) => /await import\(/.test(line));
      expect(bare, `${file}: a bare await import(…)`).toEqual([]);
      for (const [, name] of text.matchAll(/export const (load\w+) = loadedOnce\(\(\) => import\(/g))
        loaders.push(name as string);
    }
    expect(loaders).toEqual(
      expect.arrayContaining(["loadStreamDelivery", "loadGate", "loadConsumer", "loadCron"]),
    );
    for (const name of loaders) expect(setup, name).toContain(`${name}(),`);
  });
});
