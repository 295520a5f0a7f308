/**
 * The request's service context has one writer (src/middleware/context.ts): every other module
 * hands its part over in a variable of its own (src/http/app-env.ts), so what a route runs with is
 * read in one place. The sources are collected by Vite's import.meta.glob (as raw text), which the
 * Workers pool applies like any Vite transform, so a new module is held to the rule without being
 * named here.
 */
import { expect, it } from "vitest";

const sources = import.meta.glob<string>("../../src/**/*.ts", {
  query: "?raw",
  import: "default",
  eager: true,
});

const WRITER = "../../src/middleware/context.ts";
/** `c.set("ctx", …)`, however it is quoted or spaced. */
const SETS_CTX = /\.set\(\s*(["'`])ctx\1/;

it("only src/middleware/context.ts sets the request's ctx", () => {
  const files = Object.keys(sources);
  // The glob reached the sources: the rule is not passed by reading nothing.
  expect(files).toContain(WRITER);
  expect(sources[WRITER]).toMatch(SETS_CTX);
  const writers = files.filter((file) => SETS_CTX.test(sources[file] ?? ""));
  expect(writers).toEqual([WRITER]);
});
