/** Deployment checks (API_CONTRACT §31) as the tests drive them: a protection with checks, conclusions. */
import { env } from "cloudflare:test";
import { interceptStatements, request } from "./api";
import type { ErrorBody } from "./expect";
import type { Caller } from "./factories";
import { createProjectWithStack } from "./factories";
import { DEFAULT_SETTINGS, type Deployment, putProtection, type Settings } from "./protection";

export type Check = { name: string; timeout: number; on_timeout: "pass" | "fail" };

/** Two checks that fail if nobody concludes them within a day. */
export const TWO_CHECKS: Check[] = [
  { name: "e2e", timeout: 86_400, on_timeout: "fail" },
  { name: "security-scan", timeout: 86_400, on_timeout: "fail" },
];

/** PUT of the defaults with `settings` and `checks`; it must succeed. */
export async function protectWithChecks(
  who: Caller,
  environmentId: string,
  checks: Check[],
  settings: Partial<Settings> = {},
) {
  const res = await putProtection(who, environmentId, { ...DEFAULT_SETTINGS, ...settings, checks });
  if (res.status !== 200) throw new Error(`protect → ${res.status} ${res.raw}`);
  return res.body;
}

/** A project with a stack whose default environment has `checks` (and `settings`). */
export async function checkedWorld(checks: Check[] = TWO_CHECKS, settings: Partial<Settings> = {}) {
  const w = await createProjectWithStack();
  await protectWithChecks(w.owner, w.environmentId, checks, settings);
  return w;
}

/**
 * `POST /v1/deployments/{id}/checks/{name}`, answered as it is; with `hooks`, its DB runs each ahead
 * of the statements whose SQL starts with its key (./api.ts `interceptStatements`).
 */
export const conclude = (
  who: Caller,
  id: string,
  name: string,
  body: Record<string, unknown>,
  hooks?: Record<string, () => Promise<void>>,
) =>
  request<Deployment & ErrorBody>("POST", `/v1/deployments/${id}/checks/${encodeURIComponent(name)}`, {
    key: who.key,
    body,
    ...(hooks ? { bindings: { DB: interceptStatements(hooks) } } : {}),
  });

/** Makes a check of a waiting deployment due `inMs` from now (a test cannot wait the 10 s minimum), in D1. */
export async function dueIn(deploymentId: string, name: string, inMs: number) {
  const at = new Date(Date.now() + inMs).toISOString();
  await env.DB.prepare(
    "UPDATE deployments SET check_deadlines = (SELECT json_group_array(CASE WHEN json_extract(d.value, '$.name') = ?2 THEN json_set(d.value, '$.at', ?3) ELSE json(d.value) END) FROM json_each(check_deadlines) AS d) WHERE id = ?1",
  )
    .bind(deploymentId, name, at)
    .run();
  return at;
}

/** The gate object of `environmentId` told to settle `deploymentId` at `atMs` (as a create or settle does). */
export const scheduleSettle = (environmentId: string, deploymentId: string, atMs: number) =>
  env.ENVIRONMENT_GATES.get(env.ENVIRONMENT_GATES.idFromName(environmentId)).schedule(
    deploymentId,
    atMs,
    "DB",
  );

/** The `data` of every event of `type` written for a deployment, from the event log in D1. */
export async function deploymentEvents<T = Record<string, unknown>>(
  type: string,
  deploymentId: string,
): Promise<T[]> {
  const { results } = await env.DB.prepare(
    "SELECT data FROM events WHERE type = ? AND json_extract(data, '$.deployment.id') = ?",
  )
    .bind(type, deploymentId)
    .all<{ data: string }>();
  return results.map((r) => JSON.parse(r.data) as T);
}
