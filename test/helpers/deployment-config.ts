/**
 * The configuration each deployment runs with (API_CONTRACT §24), through the real Worker: the
 * public read, the engine's read, the diff, the environment's `config_pending`, and the ways a test
 * makes deployments and variable changes around them.
 */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import { type ApiResponse, internal, request } from "./api";
import { reportOk } from "./engine";
import type { ErrorBody } from "./expect";
import { type Caller, createComponent, createDeployment, createProjectWithStack } from "./factories";
import { applied } from "./variable-sets";
import { componentPath, environmentPath } from "./variables";

export type Deployment = DeploymentRecord & ErrorBody;
export type ConfigVariable = { name: string; type: string };
export type ValuedVariable = ConfigVariable & { value: string };
export type Configuration<V = ConfigVariable> = {
  deployment_id: string;
  environment: { id: string; version: number; variables: V[] };
  components: Array<{ id: string; name: string; version: number; variables: V[] }>;
};
export type DiffChange = {
  scope: { type: "environment" | "component"; id: string };
  name: string;
  action: "created" | "updated" | "deleted";
  type: { from: string | null; to: string | null };
  value_changed: boolean;
};
export type Diff = { deployment_id: string; against: string; changes: DiffChange[] };
export type EnvironmentBody = {
  id: string;
  project_id: string;
  current_deployment_id: string | null;
  config_pending: boolean;
};

/** GET /v1/deployments/{id}/config. */
export const getConfig = (caller: Caller, id: string) =>
  request<Configuration & ErrorBody>("GET", `/v1/deployments/${id}/config`, { key: caller.key });

/** GET /v1/deployments/{id}/config/diff, `query` as given (e.g. `?against=current`). */
export const getDiff = (caller: Caller, id: string, query = "") =>
  request<Diff & ErrorBody>("GET", `/v1/deployments/${id}/config/diff${query}`, { key: caller.key });

/** GET /internal/v1/deployments/{id}/config with the ADMIN_TOKEN: what the engine deploys. */
export const engineConfig = (id: string) =>
  internal<Configuration<ValuedVariable> & ErrorBody>("GET", `/deployments/${id}/config`);

/** The engine's read that must succeed. */
export async function engineConfigOk(id: string): Promise<Configuration<ValuedVariable>> {
  const res = await engineConfig(id);
  expect(res.status, res.raw).toBe(200);
  return res.body;
}

/** The public read that must succeed. */
export async function configOk(caller: Caller, id: string): Promise<Configuration> {
  const res = await getConfig(caller, id);
  expect(res.status, res.raw).toBe(200);
  return res.body;
}

/** POST /v1/environments/{id}/deployments (§23), answered as it is. */
export const createDeploymentApi = (caller: Caller, environmentId: string, body: unknown = { data: {} }) =>
  request<Deployment>("POST", `/v1/environments/${environmentId}/deployments`, {
    key: caller.key,
    body: body as Record<string, unknown>,
  });

/** POST /v1/deployments/{id}/redeploy, answered as it is. */
export const redeploy = (caller: Caller, id: string, body?: unknown) =>
  request<Deployment>("POST", `/v1/deployments/${id}/redeploy`, { key: caller.key, body });

/** A deployment (internal create) brought to `succeeded` by the engine. */
export async function succeeded(environmentId: string, stackIds: string[]): Promise<DeploymentRecord> {
  const d = await createDeployment(environmentId, stackIds);
  await reportOk(d.id, { status: "in_progress" });
  return reportOk(d.id, { status: "succeeded" });
}

/** An existing deployment moved to `succeeded` by the engine. */
export async function succeed(id: string): Promise<DeploymentRecord> {
  await reportOk(id, { status: "in_progress" });
  return reportOk(id, { status: "succeeded" });
}

/** Its `config` made null straight in D1: as a deployment made before §24. */
export async function withoutConfig(id: string): Promise<void> {
  await env.DB.prepare("UPDATE deployments SET config = NULL WHERE id = ?").bind(id).run();
}

/** GET /v1/environments/{id} that must succeed. */
export async function environmentOf(caller: Caller, id: string): Promise<EnvironmentBody> {
  const res = await request<EnvironmentBody>("GET", `/v1/environments/${id}`, { key: caller.key });
  expect(res.status, res.raw).toBe(200);
  return res.body;
}

/** The environment as the project's environment list shows it. */
export async function listedEnvironment(caller: Caller, projectId: string, id: string) {
  const res = await request<{ data: EnvironmentBody[] }>(
    "GET",
    `/v1/projects/${projectId}/environments?limit=240`,
    { key: caller.key },
  );
  expect(res.status, res.raw).toBe(200);
  const found = res.body.data.find((e) => e.id === id);
  if (!found) throw new Error(`environment ${id} not in its project's list`);
  return found;
}

/** `config_pending` as GET /v1/environments/{id} and the project's list both show it (they agree). */
export async function configPending(caller: Caller, projectId: string, environmentId: string) {
  const one = await environmentOf(caller, environmentId);
  const listed = await listedEnvironment(caller, projectId, environmentId);
  expect(listed.config_pending).toBe(one.config_pending);
  expect(listed.current_deployment_id).toBe(one.current_deployment_id);
  return one.config_pending;
}

/** `{NAME: {type, value}}` (or `null`: delete) for a change request. */
export type Changes = Record<string, { type: string; value: string } | null>;

/** PATCH {scope}/variables that must succeed; answers the version it made. */
export async function change(caller: Caller, base: string, variables: Changes, mode = "merge") {
  return (await applied(caller, base, { variables, mode })).version;
}

/**
 * A project with a stack in its default environment and two components (a variable-free one
 * among them), and the paths of the environment's and of each component's variables.
 */
export async function configWorld() {
  const world = await createProjectWithStack();
  const first = await createComponent(world.environmentId, "api");
  const second = await createComponent(world.environmentId, "worker");
  return {
    ...world,
    components: [first, second],
    envPath: environmentPath(world.environmentId),
    componentPaths: [componentPath(first.id), componentPath(second.id)],
  };
}

/** Sort by code unit order, as IDs and names are compared. */
export const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Every key at every depth of a JSON value. */
export function allKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(allKeys);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...allKeys(v)]);
}

/** A configuration without its values: what the public read must be, from the engine's. */
export function withoutValues(config: Configuration<ValuedVariable>): Configuration {
  const strip = (vs: ValuedVariable[]) => vs.map(({ name, type }) => ({ name, type }));
  return {
    deployment_id: config.deployment_id,
    environment: { ...config.environment, variables: strip(config.environment.variables) },
    components: config.components.map((c) => ({ ...c, variables: strip(c.variables) })),
  };
}

/** A scope's variables of a configuration as `{NAME: [type, value]}`. */
export const stateOf = (variables: ValuedVariable[]) =>
  Object.fromEntries(variables.map((v) => [v.name, [v.type, v.value]]));

export type { ApiResponse };
