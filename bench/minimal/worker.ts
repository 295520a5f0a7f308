/**
 * The minimal floor (bench/startup.mjs): hono and @hono/zod-openapi, one route with its zod
 * schemas, and `/openapi.json` — nothing else: no binding, no I/O, no other code. Built as the API
 * is built (wrangler.toml here: minified, no keep_names, `zod` resolved to the API's zod entry,
 * src/lib/zod, which bench/lib.mjs copies into the snapshot), so it is what the stack itself costs
 * a new isolate to start and to answer its first request.
 *
 *   GET /projects/{id}  → a project made of the path's id (the ladder floor's route and schemas)
 *   GET /openapi.json   → the document of that route
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";

const app = new OpenAPIHono();
const Project = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  icon: z.string().nullable(),
  repo_id: z.string().nullable(),
  default_environment_id: z.string(),
  connection_status: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
app.openapi(
  createRoute({
    method: "get",
    path: "/projects/{id}",
    request: {
      params: z.object({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{22}$/) }),
      headers: z.object({ "x-d1-bookmark": z.string().optional() }),
    },
    responses: {
      200: { content: { "application/json": { schema: Project } }, description: "The project." },
      404: { description: "No such project." },
    },
  }),
  (c) => {
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
  },
);
app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "minimal", version: "1" } });

export default app;
