/**
 * The minimal floor (bench/startup.mjs): hono and @hono/zod-openapi, one route with its zod
 * schemas, and `/openapi.json` — nothing else: no binding, no I/O, no other code. Built as the API
 * is built (wrangler.toml here: minified, no keep_names, `zod` resolved to the API's zod entry,
 * src/lib/zod, which bench/lib.mjs copies into the snapshot), so it is what the stack itself costs
 * a new isolate to start and to answer its first request.
 *
 *   GET /projects/{id}  → a project made of the path's id (the floors' read route, ../floor.ts)
 *   GET /openapi.json   → the document of that route
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { readRoute } from "../floor";

const app = new OpenAPIHono();
app.openapi(readRoute("/projects"), (c) => {
  const { id } = c.req.valid("param");
  const at = new Date().toISOString();
  c.header("x-d1-bookmark", c.req.valid("header")["x-d1-bookmark"] ?? "");
  return c.json(
    {
      id,
      org_id: id,
      name: "minimal",
      description: null,
      icon: null,
      repo_id: null,
      default_environment_id: id,
      connection_status: "connected",
      created_at: at,
      updated_at: at,
    },
    200,
  );
});
app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "minimal", version: "1" } });

export default app;
