/**
 * Which database an internal request runs on (src/db/databases.ts). The internal API names what
 * it acts on by id alone (`/internal/v1/stacks/{stack_id}/resources`), so the first id of its
 * path is looked up: an organization's in the directory (`organizations.database`), anything
 * inside one in the organization databases, all asked at once (internal traffic only; one query
 * each), on their primaries, since the engine acts on what it created a moment before; where more
 * than one has it (an organization being moved: API_CONTRACT §32), the directory says which holds
 * it. The answer is kept in the isolate (src/db/locations.ts). A path
 * without an id (`/internal/v1/orgs`, `/accounts`, the deployments list) runs on
 * the directory; a service that spans the organization databases asks each itself. The database
 * found is handed over as `internalDatabase`; the route's context (./context.ts) runs on it.
 */
import { eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { createMiddleware } from "hono/factory";
import type { ServiceContext } from "../context";
import { homeDatabaseOf } from "../db/databases";
import { forgetLocations, knownLocation, locationsMark, rememberLocation } from "../db/locations";
import { apiKeys, deployments, environments, projects, stackResources, stacks } from "../db/schema";
import { PRIMARY } from "../db/session";
import { isOrganizationMoved } from "../errors";
import type { AppEnv } from "../http/app-env";

type Located = { table: SQLiteTable; id: SQLiteColumn; orgId: SQLiteColumn | SQL<unknown> };

const projectOrg = (table: string) =>
  sql<string>`(SELECT p.org_id FROM projects p WHERE p.id = ${sql.raw(`${table}.project_id`)})`;

/** The tables the internal API's first path id names, by the path segment before it, and their organization. */
const INSIDE: Record<string, Located> = {
  projects: { table: projects, id: projects.id, orgId: projects.orgId },
  environments: { table: environments, id: environments.id, orgId: projectOrg("environments") },
  stacks: { table: stacks, id: stacks.id, orgId: projectOrg("stacks") },
  deployments: { table: deployments, id: deployments.id, orgId: deployments.orgId },
  resources: { table: stackResources, id: stackResources.id, orgId: projectOrg("stack_resources") },
  "api-keys": { table: apiKeys, id: apiKeys.id, orgId: apiKeys.orgId },
};

export const internalDatabase = createMiddleware<AppEnv>(async (c, next) => {
  const declared = c.get("operation")?.path.split("/") ?? [];
  const kind = declared[3];
  const param = declared[4];
  if (kind && param?.startsWith("{")) {
    const database = await locate(c.env, c.get("ctx"), kind, pathId(c.req.url));
    if (database) c.set("internalDatabase", database);
  }
  await next();
  if (c.error && isOrganizationMoved(c.error)) forgetLocations();
});

/** The path's first id, or "" when it does not decode (no row has it: the route answers 404). */
function pathId(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/")[4] ?? "");
  } catch {
    return "";
  }
}

export async function locate(
  env: Env,
  ctx: ServiceContext,
  kind: string,
  id: string,
): Promise<string | undefined> {
  const cacheKey = `${kind}/${id}`;
  const now = Date.now();
  const known = knownLocation(cacheKey, now);
  if (known) return known;
  const mark = locationsMark();
  const { orgDatabases } = ctx.config;
  if (orgDatabases.length === 1) return orgDatabases[0];
  let database: string | undefined;
  if (kind === "orgs") {
    database = await homeDatabaseOf(env, id);
  } else {
    const located = INSIDE[kind];
    if (!located) return undefined;
    const hits = await Promise.all(
      orgDatabases.map((name) =>
        ctx
          .openSession(PRIMARY, name)
          .db.select({ orgId: located.orgId })
          .from(located.table)
          .where(eq(located.id, id))
          .get(),
      ),
    );
    const holders = orgDatabases.filter((_, i) => hits[i] !== undefined);
    const orgId = hits.find((hit) => hit !== undefined)?.orgId;
    database =
      holders.length > 1 && typeof orgId === "string" ? await homeDatabaseOf(env, orgId) : holders[0];
  }
  if (database) rememberLocation(cacheKey, database, now, mark);
  return database;
}
