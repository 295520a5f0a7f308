/**
 * What the ladder's rungs share with the rungs that bench/ladder/in-api.ts runs in the API's own
 * Worker: its bindings, its statements (prepared once per isolate) and its counter call. One
 * copy, so the rung measured in either process is the same code.
 */
import type { Counter } from "./worker";

export type LadderEnv = {
  DB: D1Database;
  COUNTER: DurableObjectNamespace<Counter>;
  EVENTS: Queue;
  ORG_ID: string;
  ACCOUNT_ID: string;
};

/** Every statement of the ladder, prepared once per isolate. */
let statements:
  | {
      project: D1PreparedStatement;
      page: D1PreparedStatement;
      insertProject: D1PreparedStatement;
      insertEnvironment: D1PreparedStatement;
      insertMember: D1PreparedStatement;
      deployment: D1PreparedStatement;
      moveDeployment: D1PreparedStatement;
      insertEvent: D1PreparedStatement;
    }
  | undefined;

export function prepared(db: D1Database) {
  statements ??= {
    project: db.prepare("SELECT * FROM projects WHERE id = ?"),
    page: db.prepare("SELECT * FROM projects WHERE org_id = ? ORDER BY created_at, id LIMIT 21"),
    insertProject: db.prepare(
      "INSERT INTO projects (id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?, 'connected', ?, ?)",
    ),
    insertEnvironment: db.prepare(
      "INSERT INTO environments (id, project_id, name, created_at) VALUES (?, ?, 'production', ?)",
    ),
    insertMember: db.prepare(
      "INSERT INTO project_members (id, project_id, account_id, role, created_at) VALUES (?, ?, ?, 'owner', ?)",
    ),
    deployment: db.prepare("SELECT * FROM deployments WHERE id = ?"),
    moveDeployment: db.prepare(
      "UPDATE deployments SET status = 'in_progress', updated_at = ? WHERE id = ? AND updated_at = ?",
    ),
    insertEvent: db.prepare(
      "INSERT INTO events (id, project_id, type, data, enqueued_at, created_at) SELECT ?1, ?2, 'deployment.in_progress', ?3, NULL, ?4 WHERE changes() = 1",
    ),
  };
  return statements;
}

/** The rung's object call: the per-key counter of the request's `x-api-key`. */
export const counter = (env: LadderEnv, request: Request) =>
  env.COUNTER.get(env.COUNTER.idFromName(request.headers.get("x-api-key") ?? "anonymous")).hit();
