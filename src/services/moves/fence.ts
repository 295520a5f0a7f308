/**
 * The cron's sweeps' and the cross-database lists' way of leaving a moving organization alone
 * (API_CONTRACT §32). The refusal of a write that meets a move's fence is src/errors.ts's
 * `organizationMovedOf`.
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
  return notMoving(sql`(SELECT p.org_id FROM projects p WHERE p.id = ${projectId})`);
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
