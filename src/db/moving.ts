/**
 * How the work that spans a database's organizations leaves a moving one alone (API_CONTRACT §32:
 * other organizations never wait on the move): the cron's sweeps, retention and forgetting, the
 * operator's re-encryption, the cross-database lists. A fenced organization's rows refuse every
 * write (./move-tables.ts), so a statement over many organizations that touched one would fail as
 * a whole; these conditions keep its rows out of it. The refusal of a request's write that meets a
 * move's fence is src/errors.ts's `organizationMovedOf`.
 */
import { type SQL, sql } from "drizzle-orm";

/**
 * A condition for the cron's sweeps: the organization `orgId` is neither moving into this database
 * (its rows here are a copy still being made, which only the move writes) nor fenced in it (no
 * write of it can succeed here until it has moved).
 */
export function notMoving(orgId: SQL): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM moving_orgs m WHERE m.org_id = ${orgId} AND (m.incoming = 1 OR m.fenced = 1))`;
}

/** `notMoving` of the organization of the project `projectId` names. */
export function projectNotMoving(projectId: SQL): SQL {
  return notMoving(projectOrg(projectId));
}

/** The organization of the project `projectId` names. */
export const projectOrg = (projectId: SQL): SQL =>
  sql`(SELECT p.org_id FROM projects p WHERE p.id = ${projectId})`;

/**
 * A condition for the operator's re-encryption: the organization `orgId` is not fenced here, so its
 * rows can be written. Its rows moving in are written as any others: the copy and the capture
 * carry what its source holds, and each pass reads afresh what is left.
 */
export function notFenced(orgId: SQL): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM moving_orgs m WHERE m.org_id = ${orgId} AND m.fenced = 1)`;
}

/**
 * A condition for a list across the organization databases (the engine's `internalListDeployments`):
 * the organization's rows here are the live ones. Not while they are a copy still being made
 * (moving in, until the switch) nor once they are what a switched move left behind (until its
 * cleanup removes them): during a move every deployment is listed once, from where the directory
 * sends its organization's requests.
 */
export function liveHere(orgId: SQL): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM moving_orgs m WHERE m.org_id = ${orgId} AND (m.incoming = 1 OR m.switched = 1))`;
}
