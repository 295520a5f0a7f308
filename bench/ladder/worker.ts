/**
 * The bench's ladder (bench/run.mjs): each path does one more piece of the I/O an API
 * request needs, and nothing else.
 *
 *   GET  /bare                 → `{}`
 *   GET  /do                   → one RPC to the caller's counter object (keyed by x-api-key)
 *   GET  /d1?id=               → one D1 SELECT of a project by primary key
 *   GET  /do-d1?id=            → the counter RPC, then the SELECT: the I/O of a warm authenticated read
 *   GET  /do-d1-session?id=    → the same, the SELECT in a D1 session (read replication), its bookmark returned
 *   GET  /do-d1-page           → the counter RPC, then a page of the organization's projects (the first 20
 *                                by creation, LIMIT 21 as a keyset page asks): the I/O of a warm list
 *   GET  /hono/projects/{id}   → the same, through OpenAPIHono and a zod-openapi route
 *   GET  /hono/session/projects/{id} → the same route with the SELECT in a D1 session, its bookmark
 *                                returned: the floor the stack (hono, zod-openapi) and the contract
 *                                (a D1 session per request, `X-D1-Bookmark`) set for a read
 *   POST /write/project        → the counter RPC, then the D1 batch `POST /v1/projects` runs
 *                                (project, its environment, its owner: three INSERTs)
 *   PATCH /write/transition/{id} → what a deployment transition does: SELECT the deployment,
 *                                one batch (conditional UPDATE + INSERT of the event), queue send
 *
 * Statements are prepared once per isolate; ids are random UUIDs without dashes (an ID
 * form the contract accepts).
 */
import { DurableObject } from "cloudflare:workers";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { counter, type LadderEnv, prepared } from "./rungs";

type Env = LadderEnv;

export class Counter extends DurableObject<Env> {
  private ready = false;
  hit(): number {
    const sql = this.ctx.storage.sql;
    if (!this.ready) {
      sql.exec("CREATE TABLE IF NOT EXISTS hits (k INTEGER PRIMARY KEY, n INTEGER NOT NULL)");
      this.ready = true;
    }
    return sql
      .exec<{ n: number }>(
        "INSERT INTO hits (k, n) VALUES (0, 1) ON CONFLICT (k) DO UPDATE SET n = n + 1 RETURNING n",
      )
      .one().n;
  }
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const id = () => crypto.randomUUID().replaceAll("-", "");

/** Values as long as the API's: an ETag, a D1 bookmark, a request id, §16's exposed headers. */
const API_HEADERS = {
  etag: '"9e3f6fe7afb903e07ae3e9745d3af659"',
  bookmark: "00000000-0000001b-00000000-00000000000000000000000000000000",
  requestId: "G4qJhuPwiRGMUPof4Hdpe5",
  expose:
    "x-request-id, etag, location, retry-after, idempotent-replayed, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, ratelimit, ratelimit-policy",
};

type ProjectRow = Record<string, unknown>;

async function doThenD1(env: Env, request: Request, projectId: string) {
  await counter(env, request);
  return prepared(env.DB).project.bind(projectId).first<ProjectRow>();
}

const hono = new OpenAPIHono<{ Bindings: Env }>();
const ProjectSchema = z.object({
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
const projectOf = (row: ProjectRow): z.infer<typeof ProjectSchema> => ({
  id: String(row.id),
  org_id: String(row.org_id),
  name: String(row.name),
  description: (row.description as string | null) ?? null,
  icon: (row.icon as string | null) ?? null,
  repo_id: (row.repo_id as string | null) ?? null,
  default_environment_id: String(row.default_environment_id),
  connection_status: String(row.connection_status),
  created_at: String(row.created_at),
  updated_at: String(row.updated_at),
});
hono.openapi(
  createRoute({
    method: "get",
    path: "/hono/projects/{id}",
    request: { params: z.object({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{22}$/) }) },
    responses: {
      200: { content: { "application/json": { schema: ProjectSchema } }, description: "The project." },
      404: { description: "No such project." },
    },
  }),
  async (c) => {
    const row = await doThenD1(c.env, c.req.raw, c.req.valid("param").id);
    if (!row) return c.json({ code: "not_found" }, 404);
    return c.json(projectOf(row), 200);
  },
);

hono.openapi(
  createRoute({
    method: "get",
    path: "/hono/session/projects/{id}",
    request: {
      params: z.object({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{22}$/) }),
      headers: z.object({ "x-d1-bookmark": z.string().optional() }),
    },
    responses: {
      200: { content: { "application/json": { schema: ProjectSchema } }, description: "The project." },
      404: { description: "No such project." },
    },
  }),
  async (c) => {
    await counter(c.env, c.req.raw);
    const session = c.env.DB.withSession(c.req.valid("header")["x-d1-bookmark"] ?? "first-unconstrained");
    const row = await session
      .prepare("SELECT * FROM projects WHERE id = ?")
      .bind(c.req.valid("param").id)
      .first<ProjectRow>();
    c.header("x-d1-bookmark", session.getBookmark() ?? "");
    if (!row) return c.json({ code: "not_found" }, 404);
    return c.json(projectOf(row), 200);
  },
);

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === "/bare") return json({});
    if (path === "/do") return json({ n: await counter(env, request) });
    if (path === "/d1" || path === "/do-d1") {
      const projectId = url.searchParams.get("id") ?? "";
      const row =
        path === "/d1"
          ? await prepared(env.DB).project.bind(projectId).first<ProjectRow>()
          : await doThenD1(env, request, projectId);
      return row ? json(row) : json({ code: "not_found" }, 404);
    }
    if (path === "/do-d1-headers") {
      // The rung's I/O, answered with the header set of the API's read (API_CONTRACT §12's ETag,
      // §16's CORS, the rate-limit headers, the request id, the D1 bookmark): what carrying them
      // costs the Worker, the dev proxy and the client, with no work to compute them.
      const n = await counter(env, request);
      const row = await prepared(env.DB)
        .project.bind(url.searchParams.get("id") ?? "")
        .first<ProjectRow>();
      if (!row) return json({ code: "not_found" }, 404);
      // As long as the API's remaining count (the counter itself never resets).
      const remaining = String(99 - (n % 100));
      return new Response(JSON.stringify(row), {
        headers: {
          "content-type": "application/json",
          "access-control-allow-origin": "*",
          etag: API_HEADERS.etag,
          "access-control-expose-headers": API_HEADERS.expose,
          ratelimit: `"default";r=${remaining};t=60`,
          "ratelimit-policy": '"default";q=100;w=60',
          "x-d1-bookmark": API_HEADERS.bookmark,
          "x-ratelimit-limit": "100",
          "x-ratelimit-remaining": remaining,
          "x-ratelimit-reset": "60",
          "x-request-id": API_HEADERS.requestId,
        },
      });
    }
    if (path === "/do-d1-session") {
      // The same I/O as /do-d1, with the D1 read in a session (the Sessions API the API reads
      // through for read replication): prepared per request, as a session's statements must be.
      await counter(env, request);
      const session = env.DB.withSession("first-unconstrained");
      const row = await session
        .prepare("SELECT * FROM projects WHERE id = ?")
        .bind(url.searchParams.get("id") ?? "")
        .first<ProjectRow>();
      return row
        ? new Response(JSON.stringify(row), {
            headers: { "content-type": "application/json", "x-d1-bookmark": session.getBookmark() ?? "" },
          })
        : json({ code: "not_found" }, 404);
    }
    if (path === "/do-d1-page") {
      // A list's I/O and nothing else: the page's rows as they come, in the list envelope.
      await counter(env, request);
      const { results } = await prepared(env.DB).page.bind(env.ORG_ID).all<ProjectRow>();
      return json({ data: results.slice(0, 20), has_more: results.length > 20 });
    }
    if (path.startsWith("/hono/")) return hono.fetch(request, env, ctx);
    if (path === "/write/project" && request.method === "POST") {
      const body = await request.json<{ name: string }>();
      await counter(env, request);
      const s = prepared(env.DB);
      const now = new Date().toISOString();
      const project = id();
      const environment = id();
      await env.DB.batch([
        s.insertProject.bind(project, env.ORG_ID, body.name, body.name.toLowerCase(), environment, now, now),
        s.insertEnvironment.bind(environment, project, now),
        s.insertMember.bind(id(), project, env.ACCOUNT_ID, now),
      ]);
      return json({ id: project, name: body.name, default_environment_id: environment }, 201);
    }
    if (path.startsWith("/write/transition/") && request.method === "PATCH") {
      const deploymentId = path.slice("/write/transition/".length);
      const s = prepared(env.DB);
      const row = await s.deployment.bind(deploymentId).first<{ project_id: string; updated_at: string }>();
      if (!row) return json({ code: "not_found" }, 404);
      const now = new Date().toISOString();
      const eventId = id();
      const [moved] = await env.DB.batch([
        s.moveDeployment.bind(now, deploymentId, row.updated_at),
        s.insertEvent.bind(eventId, row.project_id, JSON.stringify({ deployment: row }), now),
      ]);
      if (moved?.meta.changes !== 1) return json({ code: "conflict" }, 409);
      ctx.waitUntil(env.EVENTS.send({ kind: "event.fanout", event_id: eventId }, { contentType: "json" }));
      return json({ ...row, status: "in_progress", updated_at: now });
    }
    return json({ code: "not_found" }, 404);
  },
  async queue(batch) {
    batch.ackAll();
  },
} satisfies ExportedHandler<Env>;
