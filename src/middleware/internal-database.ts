/**
 * Which database an internal request runs on (src/db/databases.ts). The internal API names what
 * it acts on by id alone (`/internal/v1/stacks/{stack_id}/resources`), so the first id of its
 * path is looked up: an organization's in the directory (`organizations.database`), anything
 * inside one in the organization databases, all asked at once (internal traffic only; one query
 * each), on their primaries, since the engine acts on what it created a moment before. What an id
 * is found in never changes (moving an organization is not built), so the answer is kept in the
 * isolate. A path without an id (`/internal/v1/orgs`, `/accounts`, the deployments list) runs on
 * the directory; a service that spans the organization databases asks each itself. The database
 * found is handed over as `internalDatabase`; the route's context (./context.ts) runs on it.
 */
import { eq } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { createMiddleware } from "hono/factory";
import type { ServiceContext } from "../context";
import { DIRECTORY } from "../db/databases";
import {
  apiKeys,
  deployments,
  environments,
  organizations,
  projects,
  stackResources,
  stacks,
} from "../db/schema";
import { PRIMARY } from "../db/session";
import type { AppEnv } from "../http/app-env";
import { setBounded } from "../lib/bounded-map";

type Located = { table: SQLiteTable; id: SQLiteColumn };

/** The tables the internal API's first path id names, by the path segment before it. */
const INSIDE: Record<string, Located> = {
  projects: { table: projects, id: projects.id },
  environments: { table: environments, id: environments.id },
  stacks: { table: stacks, id: stacks.id },
  deployments: { table: deployments, id: deployments.id },
  resources: { table: stackResources, id: stackResources.id },
  "api-keys": { table: apiKeys, id: apiKeys.id },
};

const found = new Map<string, string>();
const FOUND_MAX_ENTRIES = 10_000;

export const internalDatabase = createMiddleware<AppEnv>(async (c, next) => {
  const declared = c.get("operation")?.path.split("/") ?? [];
  const kind = declared[3];
  const param = declared[4];
  if (kind && param?.startsWith("{")) {
    const database = await locate(c.get("ctx"), kind, pathId(c.req.url));
    if (database) c.set("internalDatabase", database);
  }
  await next();
});

/** The path's first id, or "" when it does not decode (no row has it: the route answers 404). */
function pathId(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/")[4] ?? "");
  } catch {
    return "";
  }
}

async function locate(ctx: ServiceContext, kind: string, id: string): Promise<string | undefined> {
  const cacheKey = `${kind}/${id}`;
  const known = found.get(cacheKey);
  if (known) return known;
  const { orgDatabases } = ctx.config;
  if (orgDatabases.length === 1) return orgDatabases[0];
  let database: string | undefined;
  if (kind === "orgs") {
    const row = await ctx
      .openSession(PRIMARY, DIRECTORY)
      .db.select({ database: organizations.database })
      .from(organizations)
      .where(eq(organizations.id, id))
      .get();
    database = row?.database;
  } else {
    const located = INSIDE[kind];
    if (!located) return undefined;
    const hits = await Promise.all(
      orgDatabases.map((name) =>
        ctx
          .openSession(PRIMARY, name)
          .db.select({ id: located.id })
          .from(located.table)
          .where(eq(located.id, id))
          .get(),
      ),
    );
    database = orgDatabases[hits.findIndex((hit) => hit !== undefined)];
  }
  if (database) setBounded(found, cacheKey, database, FOUND_MAX_ENTRIES);
  return database;
}
