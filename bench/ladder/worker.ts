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
import { DurableObject } from "cloudflare:workers";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";

type Env = {
  DB: D1Database;
  COUNTER: DurableObjectNamespace<Counter>;
  EVENTS: Queue;
  ORG_ID: string;
  ACCOUNT_ID: string;
};
type Row = Record<string, unknown>;

/** A per-key counter: the stand-in for the API's per-key RateLimiter object. */
export class Counter extends DurableObject<Env> {
  private ready = false;
  hit(): number {
    const sql = this.ctx.storage.sql;
    if (!this.ready) sql.exec("CREATE TABLE IF NOT EXISTS hits (k INTEGER PRIMARY KEY, n INTEGER NOT NULL)");
    this.ready = true;
    return sql
      .exec<{ n: number }>(
        "INSERT INTO hits (k, n) VALUES (0, 1) ON CONFLICT (k) DO UPDATE SET n = n + 1 RETURNING n",
      )
      .one().n;
  }
}

const counter = (env: Env, request: Request) =>
  env.COUNTER.get(env.COUNTER.idFromName(request.headers.get("x-api-key") ?? "anonymous")).hit();
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const newId = () => crypto.randomUUID().replaceAll("-", "");

/** The three INSERTs of `POST /v1/projects`: the write rung's batch, and the floor write's. */
const CREATE_PROJECT = [
  "INSERT INTO projects (id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?, 'connected', ?, ?)",
  "INSERT INTO environments (id, project_id, name, created_at) VALUES (?, ?, 'production', ?)",
  "INSERT INTO project_members (id, project_id, account_id, role, created_at) VALUES (?, ?, ?, 'owner', ?)",
] as const;
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
const FIELDS = Object.keys(Project.shape) as (keyof z.infer<typeof Project>)[];
floor.openapi(
  createRoute({
    method: "get",
    path: "/floor/projects/{id}",
    request: {
      params: z.object({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{22}$/) }),
      headers: z.object({ "x-d1-bookmark": z.string().optional() }),
    },
    responses: {
      200: { content: { "application/json": { schema: Project } }, description: "The project." },
      404: { description: "No such project." },
    },
  }),
  async (c) => {
    await counter(c.env, c.req.raw);
    const session = c.env.DB.withSession(c.req.valid("header")["x-d1-bookmark"] ?? "first-unconstrained");
    const row = await session
      .prepare("SELECT * FROM projects WHERE id = ?")
      .bind(c.req.valid("param").id)
      .first<z.infer<typeof Project>>();
    c.header("x-d1-bookmark", session.getBookmark() ?? "");
    if (!row) return c.json({ code: "not_found" }, 404);
    return c.json(Object.fromEntries(FIELDS.map((k) => [k, row[k]])) as z.infer<typeof Project>, 200);
  },
);
floor.openapi(
  createRoute({
    method: "post",
    path: "/floor/projects",
    request: {
      body: {
        content: { "application/json": { schema: z.object({ name: z.string().min(1).max(100) }) } },
        required: true,
      },
    },
    responses: {
      201: { content: { "application/json": { schema: Project } }, description: "The project." },
    },
  }),
  async (c) => {
    const { name } = c.req.valid("json");
    await counter(c.env, c.req.raw);
    const session = c.env.DB.withSession("first-primary");
    const [now, id, environment] = [new Date().toISOString(), newId(), newId()];
    const { ORG_ID: org, ACCOUNT_ID: account } = c.env;
    await session.batch([
      session.prepare(CREATE_PROJECT[0]).bind(id, org, name, name.toLowerCase(), environment, now, now),
      session.prepare(CREATE_PROJECT[1]).bind(environment, id, now),
      session.prepare(CREATE_PROJECT[2]).bind(newId(), id, account, now),
    ]);
    c.header("x-d1-bookmark", session.getBookmark() ?? "");
    const made = { id, org_id: org, name, description: null, icon: null, repo_id: null };
    const rest = { default_environment_id: environment, connection_status: "connected" };
    return c.json({ ...made, ...rest, created_at: now, updated_at: now }, 201);
  },
);
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
