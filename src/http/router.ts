/**
 * The app's router, chosen for a new isolate's first request (issue #62).
 *
 * Hono's default, SmartRouter, builds RegExpRouter's matcher on the first request; ours cannot
 * hold `/v1/api-keys/current` beside `/v1/api-keys/:id` (a literal and a parameter at one
 * position), so it gives up and builds TrieRouter's tree instead: about 2.5 ms of the first
 * request in Node for the app's ~134 routes, every isolate. LinearRouter builds nothing (each
 * route is kept as written and matched by string comparison): about 0.5 ms for the first
 * request and ~12 µs a request after, under 0.3 % of a warm read (bench/README.md).
 *
 * LinearRouter alone would change one answer: it takes a path with a trailing slash as the path
 * without (`/v1/projects/` as `/v1/projects`), where the API has always routed strictly (Hono's
 * `strict`, the default, and TrieRouter's tree: such a path matches no operation and answers
 * 404). So a path ending in `/` (other than `/`) is matched by a TrieRouter, built on the first
 * such request. For every other path the two routers' answers are the same, handler for handler
 * and parameter for parameter: test/properties/router.test.ts compares them over every route.
 */
import type { Result, Router } from "hono/router";
import { LinearRouter } from "hono/router/linear-router";
import { TrieRouter } from "hono/router/trie-router";

export class FirstRequestRouter<T> implements Router<T> {
  readonly name = "FirstRequestRouter";
  readonly #routes: [method: string, path: string, handler: T][] = [];
  readonly #linear = new LinearRouter<T>();
  #strict: TrieRouter<T> | undefined;

  add(method: string, path: string, handler: T): void {
    this.#routes.push([method, path, handler]);
    this.#linear.add(method, path, handler);
    this.#strict?.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > 1 && path.endsWith("/")) return this.#trie().match(method, path);
    return this.#linear.match(method, path);
  }

  #trie(): TrieRouter<T> {
    if (!this.#strict) {
      const trie = new TrieRouter<T>();
      for (const [method, path, handler] of this.#routes) trie.add(method, path, handler);
      this.#strict = trie;
    }
    return this.#strict;
  }
}
