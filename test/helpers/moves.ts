/**
 * Moves of an organization between the test databases (API_CONTRACT §32): starting one through the
 * internal API, waiting for it to finish, counting an organization's rows in a database (every
 * table a move carries: src/services/moves/tables.ts), and faults injected into a database as
 * triggers that abort what they name.
 */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { createServiceContext } from "../../src/context";
import type { MoveRecord } from "../../src/schemas/move";
import { recordMove } from "../../src/services/moves/moves";
import { type MoveProgress, runMove, startProgress } from "../../src/services/moves/run";
import { MOVED_TABLES, shapeOf } from "../../src/services/moves/tables";
import { type ApiResponse, internal, internalOk, request } from "./api";
import { createOrgWithOwnerIn, d1, type OrgDatabase } from "./databases";
import { deploy, reportOk } from "./engine";
import {
  type Caller,
  createCaller,
  createComponent,
  createEnvironment,
  createIntegration,
  createProject,
  createResource,
  createStack,
  deriveKey,
  unique,
} from "./factories";
import { exchangeOk, trustAndToken } from "./oidc";
import { createVariable } from "./variables";
import { sleep } from "./wait";

export type Move = MoveRecord;

/** Starts a move of `orgId` to `to`; asserts its `202` and `Location`. */
export async function startMove(orgId: string, to: OrgDatabase): Promise<Move> {
  const res = await internal<Move>("POST", `/orgs/${orgId}/moves`, { to });
  expect(res.status, res.raw).toBe(202);
  expect(res.headers.get("location")).toBe(`/internal/v1/moves/${res.body.id}`);
  return res.body;
}

export const readMove = (id: string) => internalOk<Move>("GET", `/moves/${id}`);

const FINISHED = new Set(["completed", "cancelled", "failed"]);

/** The move once it reads `state` (default: any finished state), within `ms`. */
export async function waitForMove(id: string, state?: Move["state"], ms = 30_000): Promise<Move> {
  const end = Date.now() + ms;
  for (;;) {
    const move = await readMove(id);
    if (state ? move.state === state : FINISHED.has(move.state)) return move;
    if (Date.now() > end) throw new Error(`move ${id} still ${move.state} after ${ms} ms`);
    await sleep(25);
  }
}

/** Moves `orgId` to `to` and waits until it is `completed`. */
export async function moveOrg(orgId: string, to: OrgDatabase): Promise<Move> {
  const started = await startMove(orgId, to);
  const move = await waitForMove(started.id);
  expect(move, JSON.stringify(move)).toMatchObject({ state: "completed", error: null });
  return move;
}

/**
 * How many rows of the organization each table of `database` holds (tables with none left out),
 * its own row (which the directory keeps), limits and the bookkeeping of its moves included.
 */
export async function orgRowsIn(database: OrgDatabase, orgId: string): Promise<Record<string, number>> {
  const db = d1(database);
  const projects = (
    await db.prepare("SELECT id FROM projects WHERE org_id = ?").bind(orgId).all<{ id: string }>()
  ).results.map((row) => row.id);
  const counts: Record<string, number> = {};
  const add = (table: string, n: number) => {
    if (n > 0) counts[table] = (counts[table] ?? 0) + n;
  };
  for (const spec of MOVED_TABLES) {
    const { name } = shapeOf(spec.table);
    const from = spec.from ?? `"${name}" t`;
    for (const scope of spec.scope === "org" ? [orgId] : projects) {
      const row = await db
        .prepare(`SELECT count(*) AS n FROM ${from} WHERE ${spec.scopeColumn} = ?`)
        .bind(scope)
        .first<{ n: number }>();
      add(name, row?.n ?? 0);
    }
  }
  for (const table of ["org_limits", "moving_orgs", "move_changes"]) {
    const row = await db
      .prepare(`SELECT count(*) AS n FROM ${table} WHERE org_id = ?`)
      .bind(orgId)
      .first<{ n: number }>();
    add(table, row?.n ?? 0);
  }
  return counts;
}

/**
 * Fences `orgId` in `database` as a move's switch does (its `moving_orgs` row, fenced): every write
 * of it there is refused. Answers the fence's lifting.
 */
export async function fence(database: OrgDatabase, orgId: string) {
  await d1(database)
    .prepare(
      "INSERT INTO moving_orgs (org_id, move_id, to_database, fenced) VALUES (?, 'test', 'DB_ORG_2', 1)",
    )
    .bind(orgId)
    .run();
  return () => d1(database).prepare("DELETE FROM moving_orgs WHERE org_id = ?").bind(orgId).run();
}

/** A trigger in `database` that aborts with `injected: <name>` whenever `when` holds on `event`. */
export async function injectFault(
  database: OrgDatabase,
  name: string,
  event: string,
  when: string,
): Promise<() => Promise<void>> {
  const trigger = `fault_${name}`;
  await d1(database)
    .prepare(
      `CREATE TRIGGER ${trigger} ${event} WHEN ${when} BEGIN SELECT RAISE(ABORT, 'injected: ${name}'); END`,
    )
    .run();
  return async () => {
    await d1(database).prepare(`DROP TRIGGER IF EXISTS ${trigger}`).run();
  };
}

/** The move's object. */
export function moveObject(id: string) {
  return env.ORG_MOVES.get(env.ORG_MOVES.idFromName(id));
}

/** An organization with something in every table a move carries, and the paths that read it. */
export async function world(database: OrgDatabase) {
  const { org, owner } = await createOrgWithOwnerIn(database);
  const member = await createCaller(org, "member", owner);
  const project = await createProject(owner, { description: "moved" });
  const second = await createProject(owner);
  const environmentId = project.default_environment_id;
  const staging = await createEnvironment(project.id, unique("staging"));
  const component = await createComponent(environmentId);
  const stack = await createStack(environmentId);
  const resource = await createResource(stack.id);
  await createVariable(owner, `/v1/environments/${environmentId}/variables`, { name: "SECRET_A" });
  await createVariable(owner, `/v1/components/${component.id}/variables`, { name: "PLAIN", type: "string" });
  const members = await request("POST", `/v1/projects/${project.id}/members`, {
    key: owner.key,
    body: { account_ids: [member.accountId], role: "viewer" },
  });
  expect(members.status, members.raw).toBe(201);
  const protection = await request("PUT", `/v1/environments/${staging.id}/protection`, {
    key: owner.key,
    body: {
      required_approvals: 1,
      reviewer_role: "owner",
      prevent_self_review: false,
      wait_timer: 0,
      concurrency: "parallel",
      checks: [{ name: "e2e", timeout: 600, on_timeout: "fail" }],
    },
  });
  expect(protection.status, protection.raw).toBe(200);
  const done = await deploy(environmentId, [stack.id]);
  await reportOk(done.id, { status: "in_progress" });
  await reportOk(done.id, { status: "succeeded" });
  const waiting = await deploy(staging.id, []);
  const integration = await createIntegration(project.id);
  const derived = await deriveKey(owner, { name: "ci", scopes: ["projects:read"] });
  const { trust, token } = await trustAndToken(owner);
  const exchanged = await exchangeOk(trust.id, token);
  const stream = await request<{ id: string }>("POST", `/v1/orgs/${org.id}/audit-streams`, {
    key: owner.key,
    body: { name: "siem", url: "https://siem.example.com/ingest", enabled: false },
  });
  expect(stream.status, stream.raw).toBe(201);
  await internalOk("PUT", `/orgs/${org.id}/limits`, { projects: 50 });
  const paths = [
    "/v1/orgs",
    `/v1/orgs/${org.id}/projects`,
    "/v1/projects",
    `/v1/projects/${project.id}`,
    `/v1/projects/${second.id}`,
    `/v1/projects/${project.id}/environments`,
    `/v1/projects/${project.id}/members`,
    `/v1/projects/${project.id}/audit-log`,
    `/v1/projects/${project.id}/events`,
    `/v1/projects/${project.id}/notification-integrations`,
    `/v1/projects/${project.id}/notification-integrations/${integration.id}`,
    `/v1/projects/${project.id}/notification-integrations/${integration.id}/deliveries`,
    `/v1/environments/${environmentId}`,
    `/v1/environments/${environmentId}/components`,
    `/v1/environments/${environmentId}/stacks`,
    `/v1/environments/${environmentId}/resources`,
    `/v1/environments/${environmentId}/variables`,
    `/v1/environments/${environmentId}/variables/versions`,
    `/v1/environments/${environmentId}/deployments`,
    `/v1/environments/${staging.id}/protection`,
    `/v1/components/${component.id}`,
    `/v1/components/${component.id}/variables`,
    `/v1/stacks/${stack.id}`,
    `/v1/stacks/${stack.id}/resources`,
    `/v1/resources/${resource.id}`,
    "/v1/deployments",
    `/v1/deployments/${done.id}`,
    `/v1/deployments/${done.id}/timeline`,
    `/v1/deployments/${done.id}/config`,
    `/v1/deployments/${waiting.id}`,
    `/v1/deployments/${waiting.id}/reviews`,
    "/v1/api-keys",
    `/v1/api-keys/${derived.keyId}`,
    "/v1/oidc-trusts",
    `/v1/oidc-trusts/${trust.id}`,
  ];
  return { org, owner, member, project, derived, exchanged, paths, environmentId, streamId: stream.body.id };
}

export type Read = { status: number; etag: string | null; body: unknown };

/** Every path of `paths` read by `caller`: status, ETag and body. */
export async function readAll(caller: Caller, paths: string[]): Promise<Record<string, Read>> {
  const reads: Record<string, Read> = {};
  for (const path of paths) {
    const res: ApiResponse = await request("GET", path, { key: caller.key });
    reads[path] = { status: res.status, etag: res.headers.get("etag"), body: res.body };
  }
  return reads;
}

/** The organization's audit entries (up to 200), from its first. */
export const auditActions = async (caller: Caller) => {
  const res = await request<{ data: { action: string; sequence: number }[] }>(
    "GET",
    `/v1/orgs/${caller.orgId}/audit-log?limit=200&after_sequence=0`,
    { key: caller.key },
  );
  expect(res.status, res.raw).toBe(200);
  return res.body.data;
};

/** A move of `orgId` from `from` to `to` recorded as the internal API records one, not yet run: its first progress. */
export async function recorded(orgId: string, from: OrgDatabase, to: OrgDatabase) {
  const ctx = {
    ...createServiceContext({ env, requestId: unique("test"), database: from }),
    request: { operationId: "internal.moveOrganization", ip: null, userAgent: null },
  };
  return startProgress(await recordMove(ctx, orgId, to));
}

/** One run of a move in this isolate, handing each step's progress to `onStep` as the object would save it. */
export const runSaving = (progress: MoveProgress, onStep: (step: MoveProgress) => Promise<void> | void) =>
  runMove(
    env,
    progress,
    { deadline: Date.now() + 30_000, settleMs: 0, interrupted: () => false },
    async (step) => {
      await onStep(step);
    },
  );
