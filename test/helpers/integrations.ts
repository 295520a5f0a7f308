/**
 * Shared by the tests of the webhook operations (test/routes/integrations/; API_CONTRACT §13): an
 * integration pointing at the local receiver, events through the internal API, and single
 * delivery messages through the Worker's queue handler.
 */
import type { CreatedIntegration, IntegrationRecord } from "../../src/schemas/integration";
import { internalOk, request } from "./api";
import { type Caller, createOrgWithOwner, createProject, unique } from "./factories";
import { hook, integrate, runBatch } from "./webhooks";

/** An integration as the public API answers it: reads carry no secret, the create adds `signing_secret`. */
export type Integration = IntegrationRecord & Partial<Pick<CreatedIntegration, "signing_secret">>;
export type Delivery = {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  integration_id: string;
};

/** A URL the production rules accept (https, a public host); nothing is ever sent to it. */
export const URL_OK = "https://hooks.example.com/deploys";
/** Every notification flag, off. */
export const ALL_OFF = {
  deployments_failed: false,
  deployments_in_progress: false,
  deployments_succeeded: false,
  changelog: false,
  promotions: false,
  services_in_alarm: false,
  services_ok: false,
  deployment_gates: false,
};

/** A project's integrations collection. */
export const integrationsPath = (projectId: string) => `/v1/projects/${projectId}/notification-integrations`;
/** One integration's path. */
export const one = (projectId: string, integrationId: string) =>
  `/v1/projects/${projectId}/notification-integrations/${integrationId}`;

/** An integration through the public create (createIntegration), as `caller`; by default a webhook to URL_OK. */
export async function createPublicIntegration(
  caller: Caller,
  projectId: string,
  body: Record<string, unknown> = {},
) {
  const res = await request<Integration>("POST", integrationsPath(projectId), {
    key: caller.key,
    body: { type: "webhook", url: URL_OK, configuration: { deployments_failed: true }, ...body },
  });
  if (res.status !== 201) throw new Error(`create integration → ${res.status} ${res.raw}`);
  return res.body;
}

/** A fresh organization and project with one webhook integration delivering to a receiver bucket of its own. */
export async function setupIntegration(
  configuration: Record<string, boolean> = { changelog: true },
  query = "",
) {
  const { org, owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const bucket = unique("ops");
  const integration = await integrate(project.id, hook(bucket, query), configuration);
  return { org, owner, project, bucket, integration, path: one(project.id, integration.id) };
}

/** An event through the internal API: written, then fanned out and delivered by the real queue. */
export const emit = (projectId: string, type = "changelog.created", data: Record<string, unknown> = {}) =>
  internalOk<{ id: string }>("POST", `/projects/${projectId}/events`, { type, data });

/** One delivery message through the Worker's queue handler (the EVENTS queue or its dead letters). */
export async function runMessage(deliveryId: string, opts: { series?: number; queue?: string } = {}) {
  const body = {
    kind: "webhook.deliver",
    delivery_id: deliveryId,
    ...(opts.series === undefined ? {} : { series: opts.series }),
  };
  return (await runBatch([{ body }], opts.queue ? { queue: opts.queue } : {})).result;
}
export const runDeadLetter = (deliveryId: string, series?: number) =>
  runMessage(deliveryId, {
    queue: "deploy-platform-events-dlq",
    ...(series === undefined ? {} : { series }),
  });
