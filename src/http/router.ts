/**
 * The app's router, chosen for a new isolate's first request (issue #62) without giving up the
 * warm ones.
 *
 * Hono's routers each cost a new isolate's first request something: SmartRouter, the default,
 * builds RegExpRouter's matcher on the first match, which cannot hold `/v1/api-keys/current`
 * beside `/v1/api-keys/:id` (a literal and a parameter at one position), so it gives up and builds
 * TrieRouter's tree instead (~2.5 ms of the first request in Node for the app's ~134 routes).
 * TrieRouter and PatternRouter build as routes are added (1.1–1.9 ms and 0.8 ms, then at the
 * Worker's start). LinearRouter builds nothing but splits every route's path with a regular
 * expression on every request (~45 µs a warm match of `/v1/projects/{id}`, ~90 µs an early one).
 *
 * So: each route is split into its segments once, on the first match (~0.1 ms), and a request's
 * path is split once and compared with them, segment by segment, in the order the routes were
 * added (~2 µs). It serves the forms the app's routes are written in (literal segments, `:name`
 * parameters, a trailing `*`) and the paths a client normally sends: one `/` and then segments,
 * none empty. Any other path (a trailing slash, `//`) is matched by a TrieRouter built on the
 * first such request, as is every path if a route is ever written another way (a `{regex}`, an
 * optional `?`, a `*` inside): what Hono's default fell back to for this app, so the API's
 * answers are TrieRouter's, to the handler and the parameter. test/properties/router.test.ts
 * compares the two over every route of the app, every method, and paths near each.
 */
import type { Params, Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";

type Route<T> = {
  method: string;
  /** The literal segments, with `null` where a parameter is. */
  segments: (string | null)[];
  /** The parameters' names by position. */
  names: (string | undefined)[];
  /** Ends in `*`: matches its segments and anything after them, or nothing after. */
  tail: boolean;
  handler: T;
};

/** A path of one `/` and then segments, none empty (or `/` alone). */
const PLAIN_PATH = /^(?:\/[^/]+)+$/;
/** A route segment this router does not compare itself. */
const OTHER_FORM = /[{}?*]/;

export class FirstRequestRouter<T> implements Router<T> {
  readonly name = "FirstRequestRouter";
  readonly #added: [method: string, path: string, handler: T][] = [];
  #routes: Route<T>[] | null = null;
  /** Set once a route is written in a form `compile` does not compare: TrieRouter then answers. */
  #othersOnly = false;
  #trie: TrieRouter<T> | null = null;

  add(method: string, path: string, handler: T): void {
    this.#added.push([method, path, handler]);
    this.#routes = null;
    this.#trie?.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    const routes = this.#routes ?? this.#compile();
    if (this.#othersOnly || (path !== "/" && !PLAIN_PATH.test(path)))
      return this.#trieRouter().match(method, path);
    const parts = path === "/" ? [] : path.slice(1).split("/");
    const matched: [T, Params][] = [];
    for (const route of routes) {
      if (route.method !== method && route.method !== "ALL") continue;
      const { segments, names, tail } = route;
      if (tail ? parts.length < segments.length : parts.length !== segments.length) continue;
      let params: Params | null = null;
      let i = 0;
      for (; i < segments.length; i++) {
        const segment = segments[i];
        const part = parts[i] as string;
        if (segment === null) {
          params ??= Object.create(null) as Params;
          params[names[i] as string] = part;
        } else if (segment !== part) break;
      }
      if (i === segments.length) matched.push([route.handler, params ?? Object.create(null)]);
    }
    return [matched];
  }

  #compile(): Route<T>[] {
    const routes: Route<T>[] = [];
    for (const [method, path, handler] of this.#added) {
      const written = path === "/" || path === "" ? [] : path.slice(1).split("/");
      const tail = written.at(-1) === "*";
      if (tail) written.pop();
      if (!path.startsWith("/") || written.some((s) => s === "" || OTHER_FORM.test(s))) {
        this.#othersOnly = true;
      }
      const segments = written.map((s) => (s.startsWith(":") ? null : s));
      const names = written.map((s) => (s.startsWith(":") ? s.slice(1) : undefined));
      routes.push({ method, segments, names, tail, handler });
    }
    this.#routes = routes;
    return routes;
  }

  #trieRouter(): TrieRouter<T> {
    if (!this.#trie) {
      const trie = new TrieRouter<T>();
      for (const [method, path, handler] of this.#added) trie.add(method, path, handler);
      this.#trie = trie;
    }
    return this.#trie;
  }
}
