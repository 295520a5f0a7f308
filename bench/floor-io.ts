/**
 * The I/O of the floors with bindings (bench/io, bench/ladder): a per-key counter object (the
 * stand-in for the API's per-key RateLimiter) and the handlers of ./floor.ts's read route and of a
 * create, which do an API request's I/O and nothing else. Copied beside each snapshot (bench/lib.mjs).
 */
import { DurableObject } from "cloudflare:workers";
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { Project, type ProjectRecord, readRoute } from "./floor";

export type FloorEnv = {
  DB: D1Database;
  COUNTER: DurableObjectNamespace<Counter>;
  ORG_ID: string;
  ACCOUNT_ID: string;
};

/** A per-key counter: one SQLite upsert per call. */
export class Counter extends DurableObject<FloorEnv> {
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

/** One call to the counter object of the request's `x-api-key` (or of `anonymous`). */
export const counter = (env: FloorEnv, request: Request) =>
  env.COUNTER.get(env.COUNTER.idFromName(request.headers.get("x-api-key") ?? "anonymous")).hit();
export const newId = () => crypto.randomUUID().replaceAll("-", "");
const FIELDS = Object.keys(Project.shape) as (keyof ProjectRecord)[];

/** The INSERTs of `POST /v1/projects`: the project, its `production` environment, its owner. */
export const CREATE_PROJECT = [
  "INSERT INTO projects (id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?, 'connected', ?, ?)",
  "INSERT INTO environments (id, project_id, name, created_at) VALUES (?, ?, 'production', ?)",
  "INSERT INTO project_members (id, project_id, account_id, role, created_at) VALUES (?, ?, ?, 'owner', ?)",
] as const;

/**
 * On `app`: `GET <path>/{id}` (the request's key required: one call to its counter object, then the
 * SELECT in a D1 session, its bookmark answered) and `POST <path>` (its body validated, the call,
 * then one batch of the first `inserts` of CREATE_PROJECT in a session, its bookmark answered).
 */
export function floorRoutes<E extends FloorEnv>(
  app: OpenAPIHono<{ Bindings: E }>,
  path: string,
  inserts: 2 | 3,
) {
  app.openapi(readRoute(path), async (c) => {
    if (!c.req.header("x-api-key")) return c.json({ code: "unauthenticated" }, 401);
    await counter(c.env, c.req.raw);
    const session = c.env.DB.withSession(c.req.valid("header")["x-d1-bookmark"] ?? "first-unconstrained");
    const row = await session
      .prepare("SELECT * FROM projects WHERE id = ?")
      .bind(c.req.valid("param").id)
      .first<ProjectRecord>();
    c.header("x-d1-bookmark", session.getBookmark() ?? "");
    if (!row) return c.json({ code: "not_found" }, 404);
    return c.json(Object.fromEntries(FIELDS.map((k) => [k, row[k]])) as ProjectRecord, 200);
  });
  const body = z.object({ name: z.string().min(1).max(100) });
  const created = { content: { "application/json": { schema: Project } }, description: "The project." };
  const writeRoute = createRoute({
    method: "post",
    path,
    request: { body: { content: { "application/json": { schema: body } }, required: true } },
    responses: { 201: created },
  });
  app.openapi(writeRoute, async (c) => {
    const { name } = c.req.valid("json");
    await counter(c.env, c.req.raw);
    const session = c.env.DB.withSession("first-primary");
    const [now, id, environment] = [new Date().toISOString(), newId(), newId()];
    const { ORG_ID: org, ACCOUNT_ID: account } = c.env;
    const values = [
      [id, org, name, name.toLowerCase(), environment, now, now],
      [environment, id, now],
      [newId(), id, account, now],
    ];
    await session.batch(
      CREATE_PROJECT.slice(0, inserts).map((sql, i) => session.prepare(sql).bind(...values[i]!)),
    );
    c.header("x-d1-bookmark", session.getBookmark() ?? "");
    const made = { id, org_id: org, name, description: null, icon: null, repo_id: null };
    const rest = { default_environment_id: environment, connection_status: "connected" };
    return c.json({ ...made, ...rest, created_at: now, updated_at: now }, 201);
  });
}
