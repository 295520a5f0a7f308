/**
 * Protected environments (API_CONTRACT §26) as the tests drive them: an environment's protection,
 * its lock, reviews of waiting deployments, and what the engine sees (§20's queued list, §9's
 * moves). Written from the contract's words, not from src.
 */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { encodeCursor } from "../../src/db/pagination";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import { type ApiResponse, internal, request } from "./api";
import { newDeployment, PATCH } from "./engine";
import type { ErrorBody } from "./expect";
import { type Caller, createProjectWithStack } from "./factories";

export type Deployment = DeploymentRecord;
export type Gate = NonNullable<Deployment["gate"]>;

export type Protection = {
  environment_id: string;
  required_approvals: number;
  reviewer_role: "owner" | "contributor";
  prevent_self_review: boolean;
  wait_timer: number;
  concurrency: "parallel" | "serial" | "supersede";
  checks: { name: string; timeout: number; on_timeout: "pass" | "fail" }[];
  locked: { reason: string; account_id: string; at: string } | null;
  updated_at: string | null;
};

export type Settings = Pick<
  Protection,
  "required_approvals" | "reviewer_role" | "prevent_self_review" | "wait_timer" | "concurrency"
>;

export type Review = {
  account_id: string;
  state: "approved" | "rejected";
  comment: string | null;
  created_at: string;
};

/** The exact fields of a protection record (§26). */
export const PROTECTION_FIELDS = [
  "checks",
  "concurrency",
  "environment_id",
  "locked",
  "prevent_self_review",
  "required_approvals",
  "reviewer_role",
  "updated_at",
  "wait_timer",
];

/** §26's defaults: what every environment's protection is until it is first changed. */
export const DEFAULT_SETTINGS: Settings = {
  required_approvals: 0,
  reviewer_role: "owner",
  prevent_self_review: true,
  wait_timer: 0,
  concurrency: "parallel",
};

type Headers = Record<string, string>;
type Who = Caller | string;
const keyOf = (who: Who) => (typeof who === "string" ? who : who.key);

export const protectionPath = (environmentId: string) => `/v1/environments/${environmentId}/protection`;
export const lockPath = (environmentId: string) => `/v1/environments/${environmentId}/lock`;
export const reviewsPath = (deploymentId: string) => `/v1/deployments/${deploymentId}/reviews`;

export const getProtection = (who: Who, environmentId: string, headers: Headers = {}) =>
  request<Protection & ErrorBody>("GET", protectionPath(environmentId), { key: keyOf(who), headers });

export const putProtection = (who: Who, environmentId: string, body: unknown, headers: Headers = {}) =>
  request<Protection & ErrorBody>("PUT", protectionPath(environmentId), { key: keyOf(who), body, headers });

export const postLock = (who: Who, environmentId: string, body: unknown, headers: Headers = {}) =>
  request<Protection & ErrorBody>("POST", lockPath(environmentId), { key: keyOf(who), body, headers });

export const deleteLock = (who: Who, environmentId: string, headers: Headers = {}) =>
  request<ErrorBody>("DELETE", lockPath(environmentId), { key: keyOf(who), headers });

export const postReview = (who: Who, deploymentId: string, body: unknown, headers: Headers = {}) =>
  request<Deployment & ErrorBody>("POST", reviewsPath(deploymentId), { key: keyOf(who), body, headers });

export const listReviews = (who: Who, deploymentId: string, query = "", headers: Headers = {}) =>
  request<{ data: Review[]; has_more: boolean; next_page?: string } & ErrorBody>(
    "GET",
    `${reviewsPath(deploymentId)}${query ? `?${query}` : ""}`,
    { key: keyOf(who), headers },
  );

/** The protection as `who` reads it (it must be readable). */
export async function readProtection(who: Who, environmentId: string): Promise<Protection> {
  const res = await getProtection(who, environmentId);
  if (res.status !== 200) throw new Error(`read protection → ${res.status} ${res.raw}`);
  return res.body;
}

/** PUT of the defaults with `settings` over them; it must succeed. */
export async function protect(
  who: Who,
  environmentId: string,
  settings: Partial<Settings>,
): Promise<Protection> {
  const res = await putProtection(who, environmentId, { ...DEFAULT_SETTINGS, ...settings });
  if (res.status !== 200) throw new Error(`protect → ${res.status} ${res.raw}`);
  return res.body;
}

/** POST …/lock; it must succeed. */
export async function lock(who: Who, environmentId: string, reason = "release freeze"): Promise<Protection> {
  const res = await postLock(who, environmentId, { reason });
  if (res.status !== 200) throw new Error(`lock → ${res.status} ${res.raw}`);
  return res.body;
}

/** DELETE …/lock; it must succeed. */
export async function unlock(who: Who, environmentId: string): Promise<void> {
  const res = await deleteLock(who, environmentId);
  if (res.status !== 204) throw new Error(`unlock → ${res.status} ${res.raw}`);
}

/** An approval (or a rejection) that must succeed; the deployment as it answers. */
export async function approve(who: Who, deploymentId: string, state = "approved"): Promise<Deployment> {
  const res = await postReview(who, deploymentId, { state });
  if (res.status !== 200) throw new Error(`review → ${res.status} ${res.raw}`);
  return res.body;
}

/** The deployment as `who` reads it through the public API. */
export async function readDeployment(who: Who, id: string): Promise<Deployment> {
  const res = await request<Deployment>("GET", `/v1/deployments/${id}`, { key: keyOf(who) });
  if (res.status !== 200) throw new Error(`read deployment → ${res.status} ${res.raw}`);
  return res.body;
}

/** The deployment's row straight from D1: no request reaches the service. */
export async function rowOf(id: string): Promise<{ status: string; gate: Gate | null; updated_at: string }> {
  const row = await env.DB.prepare("SELECT status, gate, updated_at FROM deployments WHERE id = ?")
    .bind(id)
    .first<{ status: string; gate: string | null; updated_at: string }>();
  if (!row) throw new Error(`no deployment ${id} in D1`);
  return { ...row, gate: row.gate === null ? null : (JSON.parse(row.gate) as Gate) };
}

/** The deployment's status entries straight from D1 (seq order): `<stack or ->:<status>[ reason]`. */
export async function statusEntriesInDb(id: string) {
  const { results } = await env.DB.prepare(
    "SELECT * FROM deployment_timeline WHERE deployment_id = ? AND type = 'status' ORDER BY seq",
  )
    .bind(id)
    .all<Record<string, unknown>>();
  return results;
}

/** internalCreateDeployment (the engine's create, `created_by` null), answered as it is. */
export const engineCreate = (environmentId: string, stackIds: string[]) =>
  newDeployment(environmentId, { stack_ids: stackIds, data: { patch: PATCH } });

/** internalCreateDeployment that must succeed. */
export async function engineCreateOk(environmentId: string, stackIds: string[]): Promise<Deployment> {
  const res = await engineCreate(environmentId, stackIds);
  if (res.status !== 201) throw new Error(`internal create → ${res.status} ${res.raw}`);
  return res.body;
}

/** POST /v1/environments/{id}/deployments (`created_by` the caller), answered as it is. */
export const publicCreate = (who: Who, environmentId: string, body: unknown = { data: { patch: PATCH } }) =>
  request<Deployment & ErrorBody>("POST", `/v1/environments/${environmentId}/deployments`, {
    key: keyOf(who),
    body,
  });

/** The public create that must succeed. */
export async function publicCreateOk(
  who: Who,
  environmentId: string,
  stackIds?: string[],
): Promise<Deployment> {
  const body = stackIds ? { stack_ids: stackIds, data: { patch: PATCH } } : { data: { patch: PATCH } };
  const res = await publicCreate(who, environmentId, body);
  if (res.status !== 201) throw new Error(`public create → ${res.status} ${res.raw}`);
  return res.body;
}

type Page = { data: Deployment[]; has_more: boolean; next_page?: string };

/**
 * The IDs in the engine's queued list (§20, `GET /internal/v1/deployments?status=queued`) from
 * just before `since`, every page: the work the engine would take now.
 */
export async function engineQueueSince(since: string): Promise<string[]> {
  const before = new Date(Date.parse(since) - 1).toISOString();
  let after: string | undefined = encodeCursor("asc", "status=queued", before, "1111111111111111111111");
  const ids: string[] = [];
  for (let pages = 0; after !== undefined && pages < 500; pages++) {
    const res: ApiResponse<Page> = await internal(
      "GET",
      `/deployments?status=queued&limit=240&after=${encodeURIComponent(after)}`,
    );
    expect(res.status, res.raw).toBe(200);
    ids.push(...res.body.data.map((d) => d.id));
    after = res.body.has_more ? res.body.next_page : undefined;
  }
  return ids;
}

/** Whether the engine's queued list holds each of `deployments` now. */
export async function inEngineQueue(...deployments: Deployment[]): Promise<boolean[]> {
  const since = deployments.map((d) => d.created_at).sort()[0] ?? new Date().toISOString();
  const ids = new Set(await engineQueueSince(since));
  return deployments.map((d) => ids.has(d.id));
}

/** internalUpdateDeployment, answered as it is. */
export const engineMove = (id: string, status: string) =>
  internal<Deployment & ErrorBody>("PATCH", `/deployments/${id}`, { status });

/** A fresh project with a stack in its default environment, protected with `settings`. */
export async function protectedWorld(settings: Partial<Settings>) {
  const w = await createProjectWithStack();
  const protection = await protect(w.owner, w.environmentId, settings);
  return { ...w, protection };
}

/** `ms` after `iso`, as an RFC 3339 timestamp with milliseconds. */
export const plusMs = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

/** `PATCH /v1/deployments/{id}/cancel` with `key`. */
export const cancel = (key: string, id: string) =>
  request<Deployment>("PATCH", `/v1/deployments/${id}/cancel`, { key });

/** Three deployments of one stack, created (by the engine) one after the other. */
export async function three(
  environmentId: string,
  stackId: string,
): Promise<[Deployment, Deployment, Deployment]> {
  const a = await engineCreateOk(environmentId, [stackId]);
  const b = await engineCreateOk(environmentId, [stackId]);
  return [a, b, await engineCreateOk(environmentId, [stackId])];
}
