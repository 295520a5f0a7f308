/**
 * The engine's side (API_CONTRACT §9), shared by the tests of deployments, resources and their
 * internal operations: resources and deployments through /internal/v1, reports that move a
 * deployment, and the events a deployment recorded.
 */
import { env } from "cloudflare:test";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import type { StackResourceRecord } from "../../src/schemas/resource";
import type { TimelineEntry } from "../../src/schemas/timeline";
import { internal, internalOk, request } from "./api";
import type { ErrorBody } from "./expect";
import {
  type Caller,
  createDeployment,
  createEnvironment,
  createProjectWithStack,
  createResource,
  createStack,
} from "./factories";

type Deployment = DeploymentRecord;
export type EngineResource = Record<string, unknown> & {
  id: string;
  status: string;
  status_reason: string | null;
  timestamp: string;
  updated_at: string;
};

/** A JSON Patch as the engine sends it. */
export const PATCH = [{ op: "add", path: "/services/web", value: { image: "web:1" } }];
/** A git source with every field. */
export const GIT = {
  commit: {
    author: { email: "ada@example.com", login: "ada", name: "Ada" },
    committer: { name: "GitHub" },
    message: "Ship it",
    sha: "0f3c2a1",
  },
  installation_id: "42",
  owner: "acme",
  provider: "github",
  pull_request: "17",
  ref: "refs/heads/main",
  repo: "storefront",
  repo_id: "9001",
};

/** internalCreateResource, answered as it is (a refusal too). */
export const newResource = (stackId: string, fields: Record<string, unknown> = {}) =>
  internal<EngineResource & ErrorBody>("POST", `/stacks/${stackId}/resources`, {
    resource_type: "AWS::SQS::Queue",
    physical_id: "orders",
    status: "create_in_progress",
    ...fields,
  });

/** internalCreateDeployment, answered as it is (a refusal too). */
export const newDeployment = (environmentId: string, body: Record<string, unknown>) =>
  internal<Deployment & ErrorBody>("POST", `/environments/${environmentId}/deployments`, body);

/** A queued deployment of `stackIds` carrying PATCH. */
export const deploy = (environmentId: string, stackIds: string[]) =>
  createDeployment(environmentId, stackIds, { patch: PATCH });

/** internalUpdateDeployment: an engine's report, answered as it is (a refusal too). */
export const report = (id: string, body: Record<string, unknown>) =>
  internal<Deployment & ErrorBody>("PATCH", `/deployments/${id}`, body);

/** internalUpdateDeployment that must succeed; returns the record. */
export function reportOk(id: string, body: Record<string, unknown>) {
  return internalOk<Deployment>("PATCH", `/deployments/${id}`, body);
}

/** A deployment brought to `status` along legal moves. */
export async function deployIn(
  environmentId: string,
  stackIds: string[],
  status: string,
): Promise<Deployment> {
  const d = await createDeployment(environmentId, stackIds);
  if (status === "queued") return d;
  if (status === "cancelled") return reportOk(d.id, { status });
  const running = await reportOk(d.id, { status: "in_progress" });
  return status === "in_progress" ? running : reportOk(d.id, { status });
}

/** The events the service recorded for one deployment, read straight from D1. */
export async function eventsOf(deploymentId: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, project_id, type, data FROM events WHERE json_extract(data, '$.deployment.id') = ? ORDER BY rowid",
  )
    .bind(deploymentId)
    .all<{ id: string; project_id: string; type: string; data: string }>();
  return results.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
}

type World = Awaited<ReturnType<typeof createProjectWithStack>>;

/** runCommonRouteTests' setup for a GET of a deployment (or its lists): a world with one deployment. */
export const deploymentRoute = (make: (s: World, d: Deployment) => string) => async () => {
  const s = await createProjectWithStack();
  const d = await createDeployment(s.environmentId, [s.stack.id]);
  return { method: "GET", path: make(s, d), caller: s.owner };
};

/** runCommonRouteTests' setup for a GET of a resource (or its lists): a world with one resource. */
export const resourceRoute = (make: (s: World, r: StackResourceRecord) => string) => async () => {
  const s = await createProjectWithStack();
  const resource = await createResource(s.stack.id);
  return { method: "GET", path: make(s, resource), caller: s.owner as Caller };
};

/**
 * The scopes of the deployment lists: in one environment, a deployment of both its stacks and one
 * of the second only; another environment's deployment besides.
 */
export async function deploymentsInScopes() {
  const { owner, project, environmentId, stack } = await createProjectWithStack();
  const second = await createStack(environmentId);
  const both = await createDeployment(environmentId, [stack.id, second.id]);
  const onlySecond = await createDeployment(environmentId, [second.id]);
  const otherEnv = await createEnvironment(project.id);
  await createDeployment(otherEnv.id, [(await createStack(otherEnv.id)).id]);
  return { owner, project, environmentId, stack, second, both, onlySecond };
}

/** The ids of a list's first page, as `key` reads it. */
export const listIds = (key: string) => async (path: string) =>
  (await request<{ data: Array<{ id: string }> }>("GET", path, { key })).body.data.map((d) => d.id);

/** The scopes of the resource lists: a resource in each of two stacks of one environment, one elsewhere. */
export async function resourcesInScopes() {
  const { owner, project, environmentId, stack } = await createProjectWithStack();
  const second = await createStack(environmentId);
  const elsewhere = await createStack((await createEnvironment(project.id)).id);
  const a = await createResource(stack.id);
  const b = await createResource(second.id);
  await createResource(elsewhere.id);
  return { owner, project, environmentId, stack, second, a, b };
}

/** internalAppendDeploymentLogs: the engine's log lines, answered as they are (a refusal too). */
export const postLogs = (id: string, lines: Array<Record<string, unknown>>) =>
  internal<{ first_seq: number; last_seq: number } & ErrorBody>("POST", `/deployments/${id}/logs`, { lines });

/** `n` plain log lines `prefix 1` … `prefix n`. */
export const logLines = (n: number, prefix = "line") =>
  Array.from({ length: n }, (_, i) => ({ message: `${prefix} ${i + 1}` }));

/** A deployment's whole timeline as `key` reads it (JSON pages, 1000 at a time). */
export async function timelineOf(key: string, id: string): Promise<TimelineEntry[]> {
  const out: TimelineEntry[] = [];
  let after: string | undefined;
  do {
    const query = after ? `?limit=1000&after=${encodeURIComponent(after)}` : "?limit=1000";
    const res = await request<{ data: TimelineEntry[]; has_more: boolean; next_page?: string }>(
      "GET",
      `/v1/deployments/${id}/timeline${query}`,
      { key },
    );
    if (res.status !== 200) throw new Error(`timeline of ${id} → ${res.status} ${res.raw}`);
    out.push(...res.body.data);
    after = res.body.has_more ? res.body.next_page : undefined;
  } while (after);
  return out;
}

/** What a timeline says, compactly: `status:<stack or ->:<status>` or `log:<message>`. */
export const brief = (entries: TimelineEntry[]) =>
  entries.map((e) => (e.type === "status" ? `status:${e.stack_id ?? "-"}:${e.status}` : `log:${e.message}`));

/** A queued deployment of `count` stacks (in creation order) of a fresh project's environment. */
export async function deploymentOfStacks(count: number) {
  const world = await createProjectWithStack();
  const stacks = [world.stack.id];
  for (let i = 1; i < count; i++) stacks.push((await createStack(world.environmentId)).id);
  const deployment = await createDeployment(world.environmentId, stacks);
  return { ...world, stacks, deployment, path: `/v1/deployments/${deployment.id}/timeline` };
}
