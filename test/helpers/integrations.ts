/**
 * Shared by the tests of the webhook operations (test/integrations/; API_CONTRACT §13): an
 * integration pointing at the local receiver, events through the internal API, and single
 * delivery messages through the Worker's queue handler.
 */
import { internalOk } from "./api";
import { createOrgWithOwner, createProject, unique } from "./factories";
import { hook, integrate, runBatch } from "./webhooks";

export type Integration = {
  id: string;
  url: string;
  type: string;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
};
export type Delivery = {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  integration_id: string;
};

/** One integration's path. */
export const one = (projectId: string, integrationId: string) =>
  `/v1/projects/${projectId}/notification-integrations/${integrationId}`;

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
