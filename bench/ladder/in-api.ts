/**
 * The ladder's rungs inside the API's own Worker (bench/run.mjs --in-api): one isolate that
 * holds the whole API (its routes, schemas, OpenAPI registry and tables, built at load as in
 * src/index.ts) and answers both the API's paths and the ladder's (bench/ladder/worker.ts).
 *
 * The question it answers: is what separates an API read from the rung the read's own work, or
 * the isolate it runs in (a heap many times the ladder's, which every garbage collection walks)?
 * Here the rung and the read run in the same process, so the rung's figure is the limit for an
 * isolate that carries the API, and the read ÷ that rung is the request path's cost alone.
 *
 * Paths are told apart without parsing the URL, at the same cost for both: the API's begin
 * with one of API_PATHS, the ladder's never do.
 */
import api, { RateLimiter } from "../../src/index";
import ladder, { Counter } from "./worker";

export { Counter, RateLimiter };

const API_PATHS = ["/v1/", "/v1?", "/internal/", "/healthz", "/openapi.json", "/docs"];

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? "/" : url.slice(start);
}

type Both = Parameters<typeof api.fetch>[1] & Parameters<NonNullable<typeof ladder.fetch>>[1];

export default {
  fetch(request: Request, env: Both, ctx: ExecutionContext) {
    const path = pathOf(request.url);
    if (path === "/v1" || API_PATHS.some((prefix) => path.startsWith(prefix))) {
      return api.fetch(request, env, ctx);
    }
    return ladder.fetch!(request as Parameters<NonNullable<typeof ladder.fetch>>[0], env, ctx);
  },
  queue: api.queue,
  scheduled: api.scheduled,
};
