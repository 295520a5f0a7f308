/**
 * The internal API's `internalListDeployments` (API_CONTRACT §20): the deployments of every
 * project, so the engine finds work it did not create (`status=queued`), oldest first by default.
 */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { liveHere } from "../../db/moving";
import { keyset, type Page, type PageRequest, toPage } from "../../db/pagination";
import { DEPLOYMENT_STATUSES, type DeploymentStatus, deployments } from "../../db/schema";
import type { DeploymentRecord } from "../../schemas/deployment";
import { type DeploymentRow, type ListFilter, toDeploymentRecord } from "./deployments";
import { engineQueueCondition } from "./gate-rules";

/**
 * At most one page of the deployments in `status`, from the cursor, in the (status, created_at, id)
 * index's order; for `engineQueue` (the engine's queued list), without the queued deployments a
 * lock or a one-at-a-time environment holds back (§26).
 */
export function statusPageQuery(
  db: Db,
  status: DeploymentStatus,
  page: PageRequest,
  { engineQueue }: { engineQueue: boolean },
) {
  const { where, orderBy } = keyset({ createdAt: deployments.createdAt, id: deployments.id }, page);
  return db
    .select()
    .from(deployments)
    .where(
      and(
        eq(deployments.status, status),
        engineQueue ? engineQueueCondition(sql`deployments`) : undefined,
        // A moving organization's deployments once, from the database that serves it (§32).
        liveHere(sql.raw("deployments.org_id")),
        where,
      ),
    )
    .orderBy(...orderBy)
    .limit(page.limit + 1);
}

/**
 * One statement per status asked for (every status when none is), each walking the (status,
 * created_at, id) index from the cursor for at most one page, all in one batch (one round trip,
 * one snapshot) in each organization database (src/db/databases.ts), all of them at once; the page
 * is the first rows of their merge. So a page costs at most a page per status and database,
 * however many deployments the platform holds, and needs no index of its own.
 */
export async function listAllDeployments(
  ctx: ServiceContext,
  filter: ListFilter,
  page: PageRequest,
): Promise<Page<DeploymentRecord>> {
  const statuses = filter.statuses?.length ? [...new Set(filter.statuses)] : DEPLOYMENT_STATUSES;
  // §20's `?status=queued` is the engine's work, which §26's lock and concurrency hold back from;
  // any other list shows the deployments as they are (a held one is still `queued`).
  const engineQueue = statuses.length === 1 && statuses[0] === "queued";
  // Every organization database's page, at once: the merge below orders them as one.
  const pages = await Promise.all(
    ctx.config.orgDatabases.map((database) => {
      const db = database === ctx.database ? ctx.db : ctx.openSession(ctx.session.start, database).db;
      const [first, ...rest] = statuses.map((status) => statusPageQuery(db, status, page, { engineQueue }));
      return first ? db.batch([first, ...rest]) : [];
    }),
  );
  const sign = page.direction === "asc" ? 1 : -1;
  const byKey = (a: DeploymentRow, b: DeploymentRow) =>
    sign *
    (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const rows = pages
    .flat(2)
    .sort(byKey)
    .slice(0, page.limit + 1);
  return toPage(rows, page, (r) => ({ createdAt: r.createdAt, id: r.id }), toDeploymentRecord);
}
