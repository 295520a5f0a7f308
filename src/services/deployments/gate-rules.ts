/**
 * The rules of a protected environment (API_CONTRACT §26) as SQL and checks, for the statements
 * that apply them: a new deployment's status and gate, decided by its own INSERT from the
 * environment's protection (a create in an unprotected environment reads nothing more), and where
 * the engine takes work (its queued list, its moves to `in_progress`): a lock holds everything,
 * `serial` and `supersede` one deployment at a time. What changes a gate afterwards is ./gate.ts.
 */
import { eq, type SQL, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { environmentProtections } from "../../db/schema";

/** SQL true when protection row `p` holds a new deployment (§26; its checks, §31). */
const holds = sql.raw(
  "(p.required_approvals > 0 OR p.wait_timer > 0 OR p.locked_at IS NOT NULL OR json_array_length(p.checks) > 0)",
);

/** The status a deployment created now in `environmentId` starts in, for its INSERT. */
export function createdStatus(environmentId: string): SQL {
  return sql`CASE WHEN EXISTS (SELECT 1 FROM environment_protections AS p WHERE p.environment_id = ${environmentId} AND ${holds}) THEN 'waiting' ELSE 'queued' END`;
}

/**
 * Its gate (null when nothing holds it), for the same INSERT; `now` is its creation time. Its
 * `checks` are the protection's, each pending (§31), in the protection's order.
 */
export function createdGate(environmentId: string, now: string): SQL {
  return sql`(SELECT json_object('required_approvals', p.required_approvals, 'approvals', 0, 'wait_until', CASE WHEN p.wait_timer > 0 THEN strftime('%Y-%m-%dT%H:%M:%fZ', ${now}, '+' || p.wait_timer || ' seconds') END, 'blocked_by', json((SELECT json_group_array(b.v) FROM (SELECT 'approval' AS v, 1 AS o WHERE p.required_approvals > 0 UNION ALL SELECT 'wait_timer', 2 WHERE p.wait_timer > 0 UNION ALL SELECT 'lock', 3 WHERE p.locked_at IS NOT NULL UNION ALL SELECT 'check', 4 WHERE json_array_length(p.checks) > 0 ORDER BY o) AS b)), 'checks', json((SELECT json_group_array(json(c.item)) FROM (SELECT json_object('name', json_extract(e.value, '$.name'), 'state', 'pending', 'reason', NULL, 'details_url', NULL, 'summary', NULL, 'concluded_at', NULL) AS item FROM json_each(p.checks) AS e ORDER BY e.key) AS c))) FROM environment_protections AS p WHERE p.environment_id = ${environmentId} AND ${holds})`;
}

/**
 * Its checks' deadlines (§31: `timeout` seconds after `now`, its creation) and what each concludes
 * at it, for the same INSERT; null when the protection has no check.
 */
export function createdDeadlines(environmentId: string, now: string): SQL {
  return sql`(SELECT json_group_array(json(d.item)) FROM (SELECT json_object('name', json_extract(e.value, '$.name'), 'at', strftime('%Y-%m-%dT%H:%M:%fZ', ${now}, '+' || json_extract(e.value, '$.timeout') || ' seconds'), 'on_timeout', json_extract(e.value, '$.on_timeout')) AS item FROM environment_protections AS p, json_each(p.checks) AS e WHERE p.environment_id = ${environmentId} ORDER BY e.key) AS d HAVING count(*) > 0)`;
}

/**
 * The environment's concurrency policy as a deployment's RETURNING reads it (null: `parallel`), by
 * the environment's id as a value: a column named in an INSERT's RETURNING is written without its
 * table, which inside the subquery would name the protections' own column.
 */
export const concurrencyOf = (environmentId: string) =>
  sql<
    string | null
  >`(SELECT concurrency FROM environment_protections WHERE environment_id = ${environmentId})`;

/**
 * `supersede` (§26): "when a deployment of the environment enters `queued`, every older deployment
 * of that environment still `queued` or `waiting` becomes `cancelled`". Those cancels run after the
 * newer deployment's own write (./gate-after.ts `supersedeOlder`; by the cron's sweep a minute on,
 * when a crash cut them short: ./gate-sweeps.ts). This is the SQL condition on a row `n` (an alias)
 * that it is a deployment which owes the older one (its environment, `created_at` and id given)
 * that cancel: newer, of the same environment, and entered `queued` (its own `queued` timeline
 * entry, whatever it is now: running, finished or cancelled since) no earlier than the policy took
 * the value it has (the protection's `concurrency_since`, else its last change; `p` names the
 * protection row), so under `supersede`: a policy changed to `supersede` afterwards cancels
 * nothing, and then nothing is owed; a lock, an unlock or another setting changed since owes what
 * was owed. `until`: entered no later than that.
 * An older deployment owed a cancel is neither listed for the engine nor started, nor released
 * from `waiting`: a settling that meets it cancels it, naming the newer one (./gate.ts).
 */
function owesCancel(
  n: string,
  older: { environment: SQL; createdAt: SQL; id: SQL },
  p: string,
  until?: string,
) {
  const row = sql.raw(n);
  const since = sql.raw(`coalesce(${p}.concurrency_since, ${p}.updated_at, '')`);
  const entered = sql`(SELECT t.created_at FROM deployment_timeline AS t WHERE t.deployment_id = ${row}.id AND t.stack_id IS NULL AND t.status = 'queued' LIMIT 1)`;
  return sql`${row}.environment_id = ${older.environment} AND ${row}.created_at >= ${older.createdAt} AND (${row}.created_at > ${older.createdAt} OR ${row}.id > ${older.id}) AND ${row}.status != 'waiting' AND ${entered} >= ${since}${until === undefined ? sql`` : sql` AND ${entered} <= ${until}`}`;
}

/** SQL true when a newer deployment owes the older one a cancel (`owesCancel`); `p` is the environment's protection row. */
function supersededIn(environment: SQL, createdAt: SQL, id: SQL): SQL {
  return sql`(p.concurrency = 'supersede' AND EXISTS (SELECT 1 FROM deployments AS newer WHERE ${owesCancel("newer", { environment, createdAt, id }, "p")}))`;
}

/**
 * SQL for the engine's queued list (§26): a queued deployment whose environment is locked, or
 * whose environment runs one deployment at a time (`serial`, `supersede`) with one `in_progress`,
 * is left out; so is one a newer deployment owes a cancel under `supersede` (`owesCancel`).
 * `deployment` is the listed row's table name or alias.
 */
export function engineQueueCondition(deployment: SQL): SQL {
  const superseded = supersededIn(
    sql`${deployment}.environment_id`,
    sql`${deployment}.created_at`,
    sql`${deployment}.id`,
  );
  return sql`NOT EXISTS (SELECT 1 FROM environment_protections AS p WHERE p.environment_id = ${deployment}.environment_id AND (p.locked_at IS NOT NULL OR (p.concurrency != 'parallel' AND EXISTS (SELECT 1 FROM deployments AS running WHERE running.environment_id = ${deployment}.environment_id AND running.status = 'in_progress')) OR ${superseded}))`;
}

/** The deployment a start or a release is about: its environment, creation time and id. */
type Placed = { environmentId: string; createdAt: string; id: string };

const supersededRow = ({ environmentId, createdAt, id }: Placed) =>
  supersededIn(sql`${environmentId}`, sql`${createdAt}`, sql`${id}`);

/** SQL true when the engine may move `deployment` to `in_progress` now. */
export function engineMayStart(deployment: Placed): SQL {
  const { environmentId, id } = deployment;
  return sql`NOT EXISTS (SELECT 1 FROM environment_protections AS p WHERE p.environment_id = ${environmentId} AND (p.locked_at IS NOT NULL OR (p.concurrency != 'parallel' AND EXISTS (SELECT 1 FROM deployments AS running WHERE running.environment_id = ${environmentId} AND running.status = 'in_progress' AND running.id != ${id})) OR ${supersededRow(deployment)}))`;
}

/**
 * SQL true when `deployment` may be released (`waiting → queued`) as far as `supersede` goes: no
 * newer deployment owes it a cancel (`owesCancel`).
 */
export function notSuperseded(deployment: Placed): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM environment_protections AS p WHERE p.environment_id = ${deployment.environmentId} AND ${supersededRow(deployment)})`;
}

/**
 * SQL true when the `deployments` row at hand owes `deploymentId` a cancel (`owesCancel`), for a
 * settling's read of the newest such: a waiting deployment that meets one is cancelled, naming it.
 */
export function owesCancelTo(deploymentId: string): SQL {
  const older = { environment: sql`d.environment_id`, createdAt: sql`d.created_at`, id: sql`d.id` };
  return sql`EXISTS (SELECT 1 FROM deployments AS d JOIN environment_protections AS p ON p.environment_id = d.environment_id WHERE d.id = ${deploymentId} AND p.concurrency = 'supersede' AND ${owesCancel("deployments", older, "p")})`;
}

/**
 * For the cron's sweep, the newest deployment that owes the `deployments` row at hand a cancel
 * and entered `queued` by `until` (`owesCancel`), or null; its environment's protection row is
 * joined as `environment_protections`, with `supersede` in force.
 */
export function owedCancelBy(until: string): SQL<string | null> {
  const older = {
    environment: sql`deployments.environment_id`,
    createdAt: sql`deployments.created_at`,
    id: sql`deployments.id`,
  };
  return sql<
    string | null
  >`(SELECT newer.id FROM deployments AS newer WHERE ${owesCancel("newer", older, "environment_protections", until)} ORDER BY newer.created_at DESC, newer.id DESC LIMIT 1)`;
}

/** Why the engine may not start `deployment` now, or null when it may. */
export async function whyNotStart(ctx: ServiceContext, deployment: Placed) {
  const { environmentId, id } = deployment;
  const row = await ctx.db
    .select({
      locked: sql<number>`locked_at IS NOT NULL`,
      concurrency: environmentProtections.concurrency,
      running: sql<number>`EXISTS (SELECT 1 FROM deployments AS running WHERE running.environment_id = ${environmentId} AND running.status = 'in_progress' AND running.id != ${id})`,
      superseded: sql<number>`EXISTS (SELECT 1 FROM environment_protections AS p WHERE p.environment_id = ${environmentId} AND ${supersededRow(deployment)})`,
    })
    .from(environmentProtections)
    .where(eq(environmentProtections.environmentId, environmentId))
    .get();
  if (!row) return null;
  if (row.locked) return "Its environment is locked: no deployment of it starts until it is unlocked.";
  if (row.concurrency !== "parallel" && row.running) {
    return `Its environment runs one deployment at a time (\`${row.concurrency}\`) and another is \`in_progress\`.`;
  }
  if (row.superseded) {
    return "A newer deployment of its environment entered `queued` (`supersede`): this one is being cancelled.";
  }
  return null;
}
