/**
 * Shared by the webhook tests (test/properties/webhooks/, the webhook operations and the event log): real D1,
 * the real EVENTS queue and delivery lanes, real HTTP to a local receiver
 * (test/global-setup-receiver.ts). Consumer tests drive the Worker's queue handler with real
 * message batches, attempt tests make one attempt as a lane does; end-to-end tests let the queue
 * and the lanes deliver by themselves; events and deliveries can be written straight to D1 with
 * controlled timestamps (as the producers and the fan-out write them).
 */
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  runInDurableObject,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, inject, vi } from "vitest";
import { parseConfig } from "../../src/config";
import { createServiceContext } from "../../src/context";
import { openSigningSecret } from "../../src/crypto/signing-secrets";
import { createDb } from "../../src/db/client";
import type { EventType } from "../../src/db/event-types";
import {
  type DeliveryStatus,
  deliveryAttempts,
  notificationIntegrations,
  webhookDeliveries,
} from "../../src/db/schema";
import type { DeliveryLane } from "../../src/delivery-lane/object";
import worker from "../../src/index";
import { newId } from "../../src/lib/ids";
import type { QueueMessage } from "../../src/services/events/queue";
import { eventInsert, newEvent } from "../../src/services/events/write";
import { processDelivery } from "../../src/services/integrations/attempts";
import type { ReceivedRequest } from "../global-setup-receiver";
import { createIntegration } from "./factories";

export const db = createDb(env.DB);
export const receiverOrigin = () => inject("receiverOrigin");

/**
 * For the calling test file: the receiver is http://127.0.0.1, as in local development
 * (API_CONTRACT §1), so webhook URLs may be insecure while its tests run.
 */
export function allowTheLocalReceiver(): void {
  beforeAll(() => {
    env.ALLOW_INSECURE_WEBHOOKS = "true";
  });
  afterAll(() => {
    env.ALLOW_INSECURE_WEBHOOKS = "false";
  });
}

/** For the calling test file: the production URL rules (https, public hosts), whatever ran before. */
export function useProductionUrlRules(): void {
  beforeAll(() => {
    env.ALLOW_INSECURE_WEBHOOKS = "false";
  });
}

export type Flags = Partial<Record<string, boolean>>;

export const hook = (bucket: string, query = "") => `${receiverOrigin()}/hooks/${bucket}${query}`;

export async function received(bucket: string): Promise<ReceivedRequest[]> {
  const res = await fetch(`${receiverOrigin()}/received/${bucket}`);
  return res.json<ReceivedRequest[]>();
}

/** An integration of the project delivering to `url` (a receiver bucket: `hook`). */
export function integrate(
  projectId: string,
  url: string,
  configuration: Flags,
  type: "webhook" | "slack" = "webhook",
) {
  return createIntegration(projectId, { type, url, configuration });
}

/** An event as a producer writes it (never published); `ageMs` back-dates it. */
export async function writeEvent(
  projectId: string,
  type: EventType,
  data: Record<string, unknown> = {},
  ageMs = 0,
) {
  const event = newEvent(projectId, type, data);
  if (ageMs) event.createdAt = new Date(Date.now() - ageMs).toISOString();
  await eventInsert(db, event).run();
  return event;
}

/** A delivery row as the fan-out writes it, with the given status and times (handed to no lane). */
export async function writeDelivery(
  projectId: string,
  eventId: string,
  integrationId: string,
  fields: {
    status?: DeliveryStatus;
    at?: string;
    attempts?: number;
    series?: number;
    nextAttemptAt?: string;
  } = {},
) {
  const id = newId();
  const at = fields.at ?? new Date().toISOString();
  await db
    .insert(webhookDeliveries)
    .values({
      id,
      projectId,
      eventId,
      integrationId,
      status: fields.status ?? "pending",
      attempts: fields.attempts ?? 0,
      series: fields.series ?? 0,
      nextAttemptAt: fields.nextAttemptAt ?? null,
      createdAt: at,
      updatedAt: at,
    })
    .run();
  return id;
}

/**
 * One attempt of a delivery as its lane makes it (src/delivery-lane/object.ts): `attempt` counts the
 * attempts of its series from 1. Returns what the lane would do next.
 */
export function attemptOnce(
  deliveryId: string,
  attempt = 1,
  opts: { series?: number; manual?: boolean; env?: Env } = {},
) {
  const ctx = createServiceContext({ env: opts.env ?? env, requestId: `test-${newId()}` });
  return processDelivery(ctx, deliveryId, attempt, {
    series: opts.series ?? 0,
    manual: opts.manual ?? false,
  });
}

/** An integration's delivery lane: the real Durable Object. */
export const laneOf = (integrationId: string) =>
  env.DELIVERY_LANES.get(env.DELIVERY_LANES.idFromName(integrationId));

/** What an integration's lane holds now. */
export const laneEntries = (integrationId: string) =>
  runInDurableObject(laneOf(integrationId), (lane: DeliveryLane) => lane.entries());

/**
 * `n` failed deliveries to `integrationId` of `n` events of the project, written straight to D1 in
 * one batch (for tests past a recover's 1,000-row steps): two events per millisecond from `start`
 * (ties broken by the event's ID), IDs beginning with `tag`. `forget` empties the integration's
 * lane (it need not send them) and deletes the events with their deliveries.
 */
export async function bulkFailedDeliveries(
  projectId: string,
  integrationId: string,
  n: number,
  start: string,
): Promise<{ forget(): Promise<void> }> {
  const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
  await env.DB.batch([
    env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?4)
       INSERT INTO events (id, project_id, type, data, enqueued_at, created_at)
       SELECT printf('%s%014d', ?1, i), ?2, 'changelog.created', '{}', ?3,
              strftime('%Y-%m-%dT%H:%M:%fZ', ?3, printf('+%.3f seconds', (i / 2) / 1000.0))
       FROM n`,
    ).bind(tag, projectId, start, n),
    env.DB.prepare(
      `INSERT INTO webhook_deliveries (id, project_id, event_id, integration_id, status, attempts, created_at, updated_at)
       SELECT 'd' || id, project_id, id, ?2, 'failed', 1, created_at, created_at FROM events WHERE id LIKE ?1 || '%'`,
    ).bind(tag, integrationId),
  ]);
  return {
    async forget() {
      await runInDurableObject(laneOf(integrationId), (_lane: DeliveryLane, state) =>
        state.storage.sql.exec("DELETE FROM lane"),
      );
      await env.DB.prepare("DELETE FROM events WHERE id LIKE ? || '%'").bind(tag).run();
    },
  };
}

export let messageSeq = 0;
/**
 * Runs one batch through the Worker's queue handler. `result` is the runtime's account of
 * acks and retries; `retries` adds the options each `retry()` was called with, which
 * `getQueueResult` does not report (each call still reaches the real message).
 */
export async function runBatch(
  messages: Array<{ body: QueueMessage | { kind: string }; attempts?: number }>,
  opts: { queue?: string; env?: Env } = {},
) {
  const batch = createMessageBatch(
    opts.queue ?? "deploy-platform-events",
    messages.map((m) => ({
      id: `msg-${++messageSeq}`,
      timestamp: new Date(),
      attempts: m.attempts ?? 1,
      body: m.body,
    })),
  );
  const retries: Array<{ msgId: string; delaySeconds?: number }> = [];
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      retries.push(
        options?.delaySeconds === undefined
          ? { msgId: message.id }
          : { msgId: message.id, delaySeconds: options.delaySeconds },
      );
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  // The handler does all its work before it returns; ctx only lets getQueueResult read the outcome.
  await worker.queue(batch as MessageBatch<unknown>, opts.env ?? env);
  const result = await getQueueResult(batch, ctx);
  expect(result.retryMessages.map((r) => r.msgId)).toEqual(retries.map((r) => r.msgId));
  return { ids: batch.messages.map((m) => m.id), result, retries };
}

export const deliveryRow = (id: string) =>
  db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
export const attemptRows = (id: string) =>
  db
    .select()
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.deliveryId, id))
    .orderBy(deliveryAttempts.attempt)
    .all();

export const deliveriesOfEvent = (eventId: string) =>
  db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId)).all();
export const integrationRow = (id: string) =>
  db.select().from(notificationIntegrations).where(eq(notificationIntegrations.id, id)).get();

/** A signing secret as D1 keeps it (sealed: src/crypto/signing-secrets.ts), opened with the test keys. */
export const openedSecret = (integrationId: string, stored: string) =>
  openSigningSecret(parseConfig(env).variableKeys, integrationId, stored);

export const eventually = (check: () => Promise<void>) =>
  vi.waitFor(check, { timeout: 20_000, interval: 200 });

export const DAY_MS = 24 * 3600 * 1000;
