/**
 * The I/O floor (bench/startup.mjs, bench/first-instructions.mjs): the minimal floor (hono,
 * @hono/zod-openapi, the same read route and schemas, `/openapi.json`) with the I/O of an
 * authenticated API request and nothing else. Built as the API and the minimal floor are built
 * (wrangler.toml here: minified, the API's zod entry).
 *
 *   GET  /projects/{id}  → the key required; one call to the key's counter object (the API's
 *                          limiter), then one D1 SELECT in a session, its bookmark answered
 *   POST /projects       → the body validated; the call, then one D1 batch of two INSERTs (the
 *                          project and its environment) in a session, its bookmark answered
 *   GET  /openapi.json   → the document of those routes
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { type FloorEnv, floorRoutes } from "../floor-io";

export { Counter } from "../floor-io";

const app = new OpenAPIHono<{ Bindings: FloorEnv }>();
floorRoutes(app, "/projects", 2);
app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "io", version: "1" } });

export default app;
