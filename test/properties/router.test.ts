/**
 * The app's router (src/http/router.ts) builds nothing before the first request, and routes every
 * request as Hono's TrieRouter (what the default SmartRouter fell back to for this app) would:
 * the same handlers in the same order with the same parameters, for every route of the app and
 * every method, including a path with a trailing slash, which matches no operation.
 */
import { TrieRouter } from "hono/router/trie-router";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { FirstRequestRouter } from "../../src/http/router";
import { request } from "../helpers/api";
import { createOrgWithOwner } from "../helpers/factories";

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Paths near each route: its parameters filled in, then changed in the ways clients get wrong. */
function pathsNear(route: string): string[] {
  const filled = route.replace(/:\w+/g, "Abc123").replace(/\*$/, "rest");
  return [
    filled,
    `${filled}/`,
    `${filled}//`,
    `/${filled}`,
    `${filled}/extra`,
    filled.replace("/v1/", "/v1//"),
    filled.replace(/Abc123/g, "current"),
    filled.replace(/Abc123/g, "a%2Fb"),
    filled.replace(/Abc123/, ""),
    filled.toUpperCase(),
  ];
}

describe("the app's router", () => {
  it("matches as TrieRouter does, for every route of the app, every method and paths near each", () => {
    const app = createApp();
    expect(app.router).toBeInstanceOf(FirstRequestRouter);
    const ours = new FirstRequestRouter<number>();
    const trie = new TrieRouter<number>();
    app.routes.forEach((route, i) => {
      ours.add(route.method, route.path, i);
      trie.add(route.method, route.path, i);
    });
    const paths = new Set(["/", "//", "/v1", "/v1/", "/internal/v1/", "/v1/api-keys/current"]);
    for (const route of app.routes) for (const path of pathsNear(route.path)) paths.add(path);
    // And paths made at random of the routes' own segments, a stranger one and an empty one.
    const words = [...new Set(app.routes.flatMap((r) => r.path.split("/")))].filter((w) => !/[:*]/.test(w));
    words.push("Abc123", "");
    let seed = 62;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 4000; i++) {
      const length = next() % 6;
      paths.add(`/${Array.from({ length }, () => words[next() % words.length]).join("/")}`);
    }
    const matched = (result: ReturnType<typeof trie.match>) =>
      result[0].map(([handler, params]) => [handler, { ...params }]);
    let operations = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        const expected = matched(trie.match(method, path));
        expect(matched(ours.match(method, path)), `${method} ${path}`).toEqual(expected);
        if (expected.length > 0) operations++;
      }
    }
    expect(paths.size).toBeGreaterThan(2000);
    expect(operations).toBeGreaterThan(1000);
  });

  it("a route added after a trailing-slash request is matched with and without the slash", () => {
    const router = new FirstRequestRouter<string>();
    router.add("GET", "/a", "a");
    expect(router.match("GET", "/a/")[0]).toEqual([]);
    router.add("GET", "/b/*", "b");
    expect(router.match("GET", "/b/")[0].map(([h]) => h)).toEqual(["b"]);
    expect(router.match("GET", "/b/x")[0].map(([h]) => h)).toEqual(["b"]);
  });

  it("a route written in a form it does not compare (a pattern, an optional part) is TrieRouter's to match", () => {
    const router = new FirstRequestRouter<string>();
    const trie = new TrieRouter<string>();
    for (const [method, path, handler] of [
      ["ALL", "/v1/*", "all"],
      ["GET", "/v1/items/:id{[0-9]+}", "numbered"],
      ["GET", "/v1/items/:id/:part?", "optional"],
    ] as const) {
      router.add(method, path, handler);
      trie.add(method, path, handler);
    }
    for (const path of ["/v1/items/12", "/v1/items/ab", "/v1/items/12/x", "/v1/items"]) {
      const handlers = (r: typeof trie) => r.match("GET", path)[0].map(([h, p]) => [h, { ...p }]);
      expect(handlers(router), path).toEqual(handlers(trie));
    }
    expect(router.match("GET", "/v1/items/12")[0].map(([h]) => h)).toEqual(["all", "numbered", "optional"]);
  });

  it("answers a known path with a trailing slash 404 not_found, as it always has", async () => {
    const { key } = (await createOrgWithOwner()).owner;
    const res = await request("GET", "/v1/projects/", { key });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: "not_found" });
    expect((await request("GET", "/v1/projects", { key })).status).toBe(200);
  });
});
