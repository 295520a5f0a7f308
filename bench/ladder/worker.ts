/**
 * The ladder (bench/run.mjs): each path does one more piece of the I/O an API request needs, and
 * nothing of the API's own code. Its one zod-openapi route and `/openapi.json` also make it the
 * floor Worker whose start bench/startup.mjs measures beside the API's.
 *
 *   GET   /bare                    → `{}`
 *   GET   /do                      → one RPC to the caller's counter object (keyed by x-api-key)
 *   GET   /d1?id=                  → one D1 SELECT of a project by primary key
 *   GET   /do-d1?id=               → the RPC, then the SELECT: the I/O of a warm read (the rung)
 *   GET   /do-d1-page              → the RPC, then a page of the organization's projects (LIMIT 21)
 *   GET   /floor/projects/{id}     → the rung through OpenAPIHono and a zod-openapi route, the SELECT
 *                                    in a D1 session, its bookmark returned: what the stack and the
 *                                    contract cost a read before any code of the API's (the floor)
 *   POST  /floor/projects          → the write rung through OpenAPIHono and a zod-openapi route (its
 *                                    body validated), the batch in a D1 session, its bookmark
 *                                    returned: the floor of a write
 *   GET   /openapi.json            → the document of those routes
 *   POST  /write/project           → the RPC, then the three-INSERT batch `POST /v1/projects` runs
 *   PATCH /write/transition/{id}   → SELECT the deployment, one batch (conditional UPDATE + event
 *                                    INSERT), a queue send: what a deployment transition does
 *   PATCH /write/entry/{id}        → the same, the batch also inserting a numbered timeline entry
 *   PATCH /write/timeline/{id}     → that, then an RPC to an object per deployment (the feed's notify)
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { CREATE_PROJECT, counter, type FloorEnv, floorRoutes, newId } from "../floor-io";

export { Counter } from "../floor-io";

type Env = FloorEnv & { EVENTS: Queue };
type Row = Record<string, unknown>;

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** Every statement of the plain rungs, prepared once per isolate. */
const prepare = (db: D1Database) => ({
  project: db.prepare("SELECT * FROM projects WHERE id = ?"),
  page: db.prepare("SELECT * FROM projects WHERE org_id = ? ORDER BY created_at, id LIMIT 21"),
  insertProject: db.prepare(CREATE_PROJECT[0]),
  insertEnvironment: db.prepare(CREATE_PROJECT[1]),
  insertMember: db.prepare(CREATE_PROJECT[2]),
  deployment: db.prepare("SELECT * FROM deployments WHERE id = ?"),
  moveDeployment: db.prepare(
    "UPDATE deployments SET status = 'in_progress', updated_at = ? WHERE id = ? AND updated_at = ?",
  ),
  insertEvent: db.prepare(
    "INSERT INTO events (id, project_id, type, data, enqueued_at, created_at) SELECT ?1, ?2, 'deployment.in_progress', ?3, NULL, ?4 WHERE changes() = 1",
  ),
  insertEntry: db.prepare(
    "INSERT INTO deployment_timeline (deployment_id, seq, type, created_at, stack_id, status, status_reason, stream, message) SELECT ?1, base.n + 1, 'status', ?2, NULL, 'in_progress', NULL, NULL, NULL FROM (SELECT coalesce(max(seq), 0) AS n FROM deployment_timeline WHERE deployment_id = ?1) AS base WHERE changes() = 1 RETURNING seq",
  ),
});
let statements: ReturnType<typeof prepare> | undefined;
const prepared = (db: D1Database) => (statements ??= prepare(db));

const floor = new OpenAPIHono<{ Bindings: Env }>();
floorRoutes(floor, "/floor/projects", 3);
floor.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "floor", version: "1" } });

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === "/bare") return json({});
    const s = prepared(env.DB);
    if (path === "/do") return json({ n: await counter(env, request) });
    if (path === "/d1" || path === "/do-d1") {
      if (path === "/do-d1") await counter(env, request);
      const row = await s.project.bind(url.searchParams.get("id") ?? "").first<Row>();
      return row ? json(row) : json({ code: "not_found" }, 404);
    }
    if (path === "/do-d1-page") {
      await counter(env, request);
      const { results } = await s.page.bind(env.ORG_ID).all<Row>();
      return json({ data: results.slice(0, 20), has_more: results.length > 20 });
    }
    if (path === "/write/project" && request.method === "POST") {
      const { name } = await request.json<{ name: string }>();
      await counter(env, request);
      const [now, project, environment] = [new Date().toISOString(), newId(), newId()];
      await env.DB.batch([
        s.insertProject.bind(project, env.ORG_ID, name, name.toLowerCase(), environment, now, now),
        s.insertEnvironment.bind(environment, project, now),
        s.insertMember.bind(newId(), project, env.ACCOUNT_ID, now),
      ]);
      return json({ id: project, name, default_environment_id: environment }, 201);
    }
    const transition = /^\/write\/(transition|entry|timeline)\/(.+)$/.exec(path);
    if (transition && request.method === "PATCH") {
      const [, kind, id = ""] = transition;
      const row = await s.deployment.bind(id).first<{ project_id: string; updated_at: string }>();
      if (!row) return json({ code: "not_found" }, 404);
      const [now, eventId] = [new Date().toISOString(), newId()];
      const [moved] = await env.DB.batch([
        s.moveDeployment.bind(now, id, row.updated_at),
        s.insertEvent.bind(eventId, row.project_id, JSON.stringify({ deployment: row }), now),
        ...(kind === "transition" ? [] : [s.insertEntry.bind(id, now)]),
      ]);
      if (moved?.meta.changes !== 1) return json({ code: "conflict" }, 409);
      if (kind === "timeline") ctx.waitUntil(env.COUNTER.get(env.COUNTER.idFromName(id)).hit());
      ctx.waitUntil(env.EVENTS.send({ kind: "event.fanout", event_id: eventId }, { contentType: "json" }));
      return json({ ...row, status: "in_progress", updated_at: now });
    }
    return floor.fetch(request, env, ctx);
  },
  async queue(batch) {
    batch.ackAll();
  },
} satisfies ExportedHandler<Env>;
