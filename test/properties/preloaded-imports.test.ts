/**
 * Every module that a Durable Object, the queue handler or the cron handler loads on first use
 * (`await import("…")` in src/index.ts and in each object's file) is loaded by test/setup.ts before
 * any test runs: under the tests' module runner a load is I/O of the context that started it, and
 * a second object awaiting a load in flight fails with "Cannot perform I/O on behalf of a
 * different Durable Object". A new lazy import in an object is held to this without being named
 * here. The sources are read by Vite's import.meta.glob (as raw text).
 */
import { describe, expect, it } from "vitest";

const lazyLoaders = import.meta.glob<string>(["../../src/index.ts", "../../src/*/object.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});
const setup = import.meta.glob<string>("../setup.ts", { query: "?raw", import: "default", eager: true });

/** The modules a source imports lazily, as paths from src/ (`services/audit/stream-delivery`). */
function lazyImports(file: string, text: string): string[] {
  const dir = file
    .replace(/^\.\.\/\.\.\/src\//, "")
    .split("/")
    .slice(0, -1);
  return [...text.matchAll(/await import\("(\.{1,2}\/[^"]+)"\)/g)].map(([, spec]) => {
    const parts = [...dir];
    for (const part of (spec as string).split("/")) {
      if (part === "..") parts.pop();
      else if (part !== ".") parts.push(part);
    }
    return parts.join("/");
  });
}

describe("modules loaded on first use by objects and handlers", () => {
  it("are each loaded by test/setup.ts", () => {
    const preloaded = Object.values(setup)[0] ?? "";
    const lazy = Object.entries(lazyLoaders).flatMap(([file, text]) => lazyImports(file, text));
    // The objects' own (audit streams, gates, moves) and the handlers' (consumer, cron) at least.
    expect(lazy).toEqual(
      expect.arrayContaining([
        "services/audit/stream-delivery",
        "services/deployments/gate",
        "consumer",
        "cron",
      ]),
    );
    for (const module of new Set(lazy)) expect(preloaded, module).toContain(`import("../src/${module}")`);
  });
});
