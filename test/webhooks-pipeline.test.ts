/**
 * The delivery pipeline in the Workers runtime: real D1, the real EVENTS queue, real HTTP to
 * a local receiver (test/global-setup-receiver.ts). Consumer tests drive the Worker's queue
 * handler with real message batches; end-to-end tests let the queue deliver by itself.
 */
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createDb } from "../src/db/client";
import { deliveryAttempts, events, webhookDeliveries } from "../src/db/schema";
import worker from "../src/index";
import { newId } from "../src/lib/ids";
import type { EventType } from "../src/schemas/event-types";
import type { QueueMessage } from "../src/schemas/queue-messages";
import { eventInsert, newEvent } from "../src/services/events";
import { attemptDelivery } from "../src/webhooks/deliver";
import { RETRY_DELAYS_SECONDS } from "../src/webhooks/retry";
import type { ReceivedRequest } from "./global-setup-receiver";
import { internalOk, request } from "./helpers/api";
import { createOrgWithOwner, createProject, createStack, unique } from "./helpers/factories";
import { expectMatchesOpenApi } from "./helpers/openapi";

const origin = inject("receiverOrigin");
const db = createDb(env.DB);

beforeAll(() => {
  // The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
  env.ALLOW_INSECURE_WEBHOOKS = "true";
});
afterAll(() => {
  env.ALLOW_INSECURE_WEBHOOKS = "false";
});

type Flags = Partial<Record<string, boolean>>;
type CreatedIntegration = { id: string; signing_secret: string; url: string };

const hook = (bucket: string, query = "") => `${origin}/hooks/${bucket}${query}`;

async function received(bucket: string): Promise<ReceivedRequest[]> {
  const res = await fetch(`${origin}/received/${bucket}`);
  return res.json<ReceivedRequest[]>();
}

async function newProject() {
  const { owner } = await createOrgWithOwner();
  return { owner, project: await createProject(owner) };
}

function integrate(projectId: string, url: string, configuration: Flags, type = "webhook") {
  return internalOk<CreatedIntegration>("POST", `/projects/${projectId}/notification-integrations`, {
    type,
    url,
    configuration,
  });
}

/** An event written as a producer writes it, but never published. */
async function writeEvent(projectId: string, type: EventType, data: Record<string, unknown> = {}, ageMs = 0) {
  const event = newEvent(projectId, type, data);
  if (ageMs) event.createdAt = new Date(Date.now() - ageMs).toISOString();
  await eventInsert(db, event).run();
  return event;
}

/** A pending delivery row, as the fan-out writes it (without queueing anything). */
async function writeDelivery(
  projectId: string,
  eventId: string,
  integrationId: string,
  now = new Date().toISOString(),
) {
  const id = newId();
  await db
    .insert(webhookDeliveries)
    .values({ id, projectId, eventId, integrationId, status: "pending", createdAt: now, updatedAt: now })
    .run();
  return id;
}

let messageSeq = 0;
/**
 * Runs one batch through the Worker's queue handler. `result` is the runtime's account of
 * acks and retries; `retries` adds the options each `retry()` was called with, which
 * `getQueueResult` does not report (each call still reaches the real message).
 */
async function runBatch(
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

const deliveryRow = (id: string) =>
  db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
const attemptRows = (id: string) =>
  db
    .select()
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.deliveryId, id))
    .orderBy(deliveryAttempts.attempt)
    .all();

const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 20_000, interval: 200 });

describe("fan-out", () => {
  it("creates one delivery per integration whose flag is on, for each flag combination, once", async () => {
    const { project } = await newProject();
    const b = {
      failed: unique("a"),
      changelog: unique("b"),
      both: unique("c"),
      off: unique("d"),
      slack: unique("e"),
    };
    const failedOnly = await integrate(project.id, hook(b.failed), { deployments_failed: true });
    const changelogOnly = await integrate(project.id, hook(b.changelog), { changelog: true });
    const both = await integrate(project.id, hook(b.both), { changelog: true, services_ok: true });
    await integrate(project.id, hook(b.off), {});
    const slack = await integrate(project.id, hook(b.slack), { services_ok: true }, "slack");

    const cases: Array<[EventType, string[]]> = [
      ["changelog.created", [changelogOnly.id, both.id]],
      ["service.ok", [both.id, slack.id]],
      ["deployment.failed", [failedOnly.id]],
      ["service.in_alarm", []],
      ["promotion.created", []],
    ];
    const sent = new Map<string, string[]>();
    for (const [type, expected] of cases) {
      const event = await writeEvent(project.id, type, { n: type });
      const first = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }]);
      expect(first.result.explicitAcks).toEqual(first.ids);
      // A redelivered fan-out message: no second row, no second message.
      const again = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }]);
      expect(again.result.explicitAcks).toEqual(again.ids);

      const rows = await db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.eventId, event.id))
        .all();
      expect(rows.map((r) => r.integrationId).sort(), type).toEqual([...expected].sort());
      const stored = await db.select().from(events).where(eq(events.id, event.id)).get();
      expect(stored?.enqueuedAt).toBeTruthy();
      for (const integrationId of expected)
        sent.set(integrationId, [...(sent.get(integrationId) ?? []), event.id]);
    }

    // The delivery messages went through the real queue: each receiver gets its events, once each.
    await eventually(async () => {
      expect((await received(b.failed)).map((r) => r.headers["webhook-id"])).toEqual(sent.get(failedOnly.id));
      expect((await received(b.changelog)).map((r) => r.headers["webhook-id"])).toEqual(
        sent.get(changelogOnly.id),
      );
      expect((await received(b.both)).map((r) => r.headers["webhook-id"]).sort()).toEqual(
        sent.get(both.id)?.sort(),
      );
      expect((await received(b.slack)).map((r) => r.headers["webhook-id"])).toEqual(sent.get(slack.id));
    });
    expect(await received(b.off)).toEqual([]);
    const [slackRequest] = await received(b.slack);
    expect(JSON.parse(slackRequest?.body ?? "{}")).toEqual({
      text: `:large_green_circle: A service is OK (project \`${project.id}\`)`,
    });
  });

  it("an event of a deleted project is acknowledged and dropped", async () => {
    const { owner, project } = await newProject();
    const event = await writeEvent(project.id, "service.ok");
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    const run = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }]);
    expect(run.result.explicitAcks).toEqual(run.ids);
  });
});

describe("delivery", () => {
  async function pendingDelivery(url: string, type = "webhook") {
    const { project } = await newProject();
    const integration = await integrate(project.id, url, { services_in_alarm: true }, type);
    const event = await writeEvent(project.id, "service.in_alarm", { service: "api", reason: "5xx" });
    const deliveryId = await writeDelivery(project.id, event.id, integration.id);
    return { project, integration, event, deliveryId };
  }
  const deliver = (deliveryId: string, attempts = 1) => ({
    body: { kind: "webhook.deliver", delivery_id: deliveryId } as const,
    attempts,
  });

  it("POSTs a Standard Webhooks request that the standardwebhooks package verifies, then acks", async () => {
    const bucket = unique("ok");
    const { integration, event, deliveryId, project } = await pendingDelivery(hook(bucket));
    const run = await runBatch([deliver(deliveryId)]);
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect(run.result.retryMessages).toEqual([]);

    const [req, ...rest] = await received(bucket);
    expect(rest).toEqual([]);
    expect(req?.method).toBe("POST");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["webhook-id"]).toBe(event.id);
    expect(Math.abs(Number(req?.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(300);
    const payload = new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {});
    expect(payload).toEqual({
      type: "service.in_alarm",
      timestamp: event.createdAt,
      data: { service: "api", reason: "5xx", project_id: project.id },
    });

    expect(await deliveryRow(deliveryId)).toMatchObject({
      status: "succeeded",
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(await attemptRows(deliveryId)).toEqual([
      expect.objectContaining({ attempt: 1, statusCode: 200, error: null, nextAttemptAt: null }),
    ]);

    // Idempotent: the queue delivering the same message again sends nothing.
    const again = await runBatch([deliver(deliveryId, 2)]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect(await received(bucket)).toHaveLength(1);
  });

  it("retries a failing endpoint after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then dead-letters and marks it failed", async () => {
    const bucket = unique("fail");
    const { deliveryId, event } = await pendingDelivery(hook(bucket, "?status=500"));
    for (let attempt = 1; attempt <= 7; attempt++) {
      const run = await runBatch([deliver(deliveryId, attempt)]);
      expect(run.result.explicitAcks).toEqual([]);
      const delaySeconds = RETRY_DELAYS_SECONDS[attempt - 1];
      // After the 7th try the retry exhausts max_retries: the queue moves it to the dead-letter queue.
      expect(run.retries).toEqual([
        delaySeconds === undefined ? { msgId: run.ids[0] } : { msgId: run.ids[0], delaySeconds },
      ]);
    }
    const requests = await received(bucket);
    expect(requests).toHaveLength(7);
    expect(new Set(requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([event.id]));

    const attempts = await attemptRows(deliveryId);
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((n) => [n, 500, "HTTP 500"]),
    );
    // Each recorded attempt says when the next one is due: the schedule's delay after it.
    expect(
      attempts.map((a) =>
        a.nextAttemptAt ? (Date.parse(a.nextAttemptAt) - Date.parse(a.createdAt)) / 1000 : null,
      ),
    ).toEqual([...RETRY_DELAYS_SECONDS, null]);
    expect(await deliveryRow(deliveryId)).toMatchObject({
      status: "pending",
      attempts: 7,
      lastStatusCode: 500,
    });

    const dead = await runBatch([deliver(deliveryId, 1)], { queue: "deploy-platform-events-dlq" });
    expect(dead.result.explicitAcks).toEqual(dead.ids);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "failed", nextAttemptAt: null });

    // A late copy of the message does not send a failed delivery again.
    await runBatch([deliver(deliveryId, 3)]);
    expect(await received(bucket)).toHaveLength(7);
  });

  it("honours Retry-After, up to the queue's 12 h limit", async () => {
    const a = await pendingDelivery(hook(unique("ra"), "?status=503&retry_after=600"));
    const b = await pendingDelivery(hook(unique("rb"), "?status=429&retry_after=999999"));
    const run = await runBatch([deliver(a.deliveryId), deliver(b.deliveryId)]);
    expect(run.retries).toEqual([
      { msgId: run.ids[0], delaySeconds: 600 },
      { msgId: run.ids[1], delaySeconds: 43200 },
    ]);
  });

  it("acks and retries each message of a batch on its own", async () => {
    const ok = await pendingDelivery(hook(unique("mixed-ok")));
    const bad = await pendingDelivery(hook(unique("mixed-bad"), "?status=404"));
    const run = await runBatch([deliver(bad.deliveryId, 2), deliver(ok.deliveryId)]);
    expect(run.result.explicitAcks).toEqual([run.ids[1]]);
    expect(run.retries).toEqual([{ msgId: run.ids[0], delaySeconds: RETRY_DELAYS_SECONDS[1] }]);
  });

  it("does not follow a redirect: a 3xx is a failed attempt", async () => {
    const bucket = unique("redirect");
    const { deliveryId } = await pendingDelivery(hook(bucket, "?status=302"));
    const run = await runBatch([deliver(deliveryId)]);
    expect(run.retries).toEqual([{ msgId: run.ids[0], delaySeconds: 5 }]);
    expect(await received(`${bucket}-redirected`)).toEqual([]);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "pending", lastStatusCode: 302 });
  });

  it("a network error is a failed attempt with its reason recorded", async () => {
    // Port 9 (discard) has no listener here: the connection is refused.
    const { deliveryId } = await pendingDelivery("http://127.0.0.1:9/hook");
    const run = await runBatch([deliver(deliveryId)]);
    expect(run.retries).toEqual([{ msgId: run.ids[0], delaySeconds: 5 }]);
    const [attempt] = await attemptRows(deliveryId);
    expect(attempt).toMatchObject({ attempt: 1, statusCode: null });
    expect(attempt?.error).toMatch(/^Network error/);
  });

  it("gives up on an attempt that takes longer than its timeout", async () => {
    const outcome = await attemptDelivery(
      { type: "webhook", url: hook(unique("slow"), "?delay_ms=3000"), signingSecrets: ["whsec_AAAA"] },
      { id: "evt", type: "service.ok", createdAt: new Date().toISOString(), data: {} },
      { allowInsecure: true, timeoutMs: 200 },
    );
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: "Timed out after 200 ms." });
  });

  it("checks the URL again at delivery time and refuses it without sending", async () => {
    const bucket = unique("guard");
    const { deliveryId } = await pendingDelivery(hook(bucket));
    const strict = { ...env, ALLOW_INSECURE_WEBHOOKS: "false" } as Env;
    const run = await runBatch([deliver(deliveryId)], { env: strict });
    expect(run.retries).toEqual([{ msgId: run.ids[0], delaySeconds: 5 }]);
    expect(await received(bucket)).toEqual([]);
    const [attempt] = await attemptRows(deliveryId);
    expect(attempt?.error).toMatch(/^URL refused: Must be an https:\/\/ URL/);
  });

  it("sends a Slack integration a one-line { text }", async () => {
    const bucket = unique("slack");
    const { deliveryId, project } = await pendingDelivery(hook(bucket), "slack");
    await runBatch([deliver(deliveryId)]);
    const [req] = await received(bucket);
    expect(JSON.parse(req?.body ?? "{}")).toEqual({
      text: `:rotating_light: api is in alarm: 5xx (project \`${project.id}\`)`,
    });
  });

  it("acks a message whose delivery no longer exists", async () => {
    const run = await runBatch([deliver(newId())]);
    expect(run.result.explicitAcks).toEqual(run.ids);
  });
});

describe("deliveries log", () => {
  it("pages newest first by default, oldest first on request", async () => {
    const { owner, project } = await newProject();
    const integration = await integrate(project.id, hook(unique("log")), { services_ok: true });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const event = await writeEvent(project.id, "service.ok");
      ids.push(await writeDelivery(project.id, event.id, integration.id, `2026-01-0${i + 1}T00:00:00.000Z`));
    }
    const path = `/v1/projects/${project.id}/notification-integrations/${integration.id}/deliveries`;
    type LogPage = { data: Array<{ id: string; status: string }>; has_more: boolean; next_page?: string };
    const first = await request<LogPage>("GET", `${path}?limit=2`, { key: owner.key });
    expect(first.body.data.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.has_more).toBe(true);
    const second = await request<LogPage>(
      "GET",
      `${path}?limit=2&after=${encodeURIComponent(first.body.next_page ?? "")}`,
      { key: owner.key },
    );
    expect(second.body).toMatchObject({ data: [{ id: ids[0], status: "pending" }], has_more: false });
    const ascending = await request<LogPage>("GET", `${path}?sort_by=created_at`, { key: owner.key });
    expect(ascending.body.data.map((d) => d.id)).toEqual(ids);
  });
});

describe("never losing an event", () => {
  it("sweeps events whose fan-out never happened once they are a minute old, and leaves fresh ones", async () => {
    const { project } = await newProject();
    const bucket = unique("swept");
    const integration = await integrate(project.id, hook(bucket), { changelog: true });
    const stale = await writeEvent(project.id, "changelog.created", { title: "lost" }, 2 * 60_000);
    const fresh = await writeEvent(project.id, "changelog.created", { title: "new" });

    // The cron runs the sweep.
    await worker.scheduled(createScheduledController({ cron: "*/5 * * * *" }), env);
    const staleRow = await db.select().from(events).where(eq(events.id, stale.id)).get();
    expect(staleRow?.enqueuedAt).toBeTruthy();
    const freshRow = await db.select().from(events).where(eq(events.id, fresh.id)).get();
    expect(freshRow?.enqueuedAt).toBeNull();
    await eventually(async () => {
      const [req] = await received(bucket);
      expect(req?.headers["webhook-id"]).toBe(stale.id);
      expect(
        new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {}),
      ).toBeTruthy();
    });
  });

  it("a dead-lettered fan-out is left for the sweep; a dead-lettered disconnect still completes", async () => {
    const { owner, project } = await newProject();
    const event = await writeEvent(project.id, "service.ok");
    const run = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }], {
      queue: "deploy-platform-events-dlq",
    });
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect((await db.select().from(events).where(eq(events.id, event.id)).get())?.enqueuedAt).toBeNull();

    await env.DB.prepare("UPDATE projects SET connection_status = 'disconnecting' WHERE id = ?")
      .bind(project.id)
      .run();
    await runBatch([{ body: { kind: "project.disconnect", project_id: project.id } }], {
      queue: "deploy-platform-events-dlq",
    });
    const got = await request<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
    });
    expect(got.body.connection_status).toBe("disconnected");
  });

  it("project disconnect still completes through the queue", async () => {
    const { owner, project } = await newProject();
    expect((await request("PATCH", `/v1/projects/${project.id}/disconnect`, { key: owner.key })).status).toBe(
      204,
    );
    await eventually(async () => {
      const got = await request<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
        key: owner.key,
      });
      expect(got.body.connection_status).toBe("disconnected");
    });
  });
});

describe("end to end", () => {
  it("an internal event reaches the receiver through the queue, signed, and shows in the deliveries log", async () => {
    const { owner, project } = await newProject();
    const bucket = unique("e2e");
    const integration = await integrate(project.id, hook(bucket), { promotions: true });
    const accepted = await internalOk<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "promotion.created",
      data: { summary: "staging → production" },
    });

    await eventually(async () => {
      const [req] = await received(bucket);
      expect(req?.headers["webhook-id"]).toBe(accepted.id);
      expect(
        new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {}),
      ).toMatchObject({
        type: "promotion.created",
        data: { summary: "staging → production", project_id: project.id },
      });
    });
    await eventually(async () => {
      const log = await request<{ data: Array<Record<string, unknown>>; has_more: boolean }>(
        "GET",
        `/v1/projects/${project.id}/notification-integrations/${integration.id}/deliveries`,
        { key: owner.key },
      );
      expect(log.status).toBe(200);
      await expectMatchesOpenApi(
        "GET",
        "/v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries",
        200,
        log.body,
      );
      expect(log.body.has_more).toBe(false);
      expect(log.body.data).toEqual([
        expect.objectContaining({
          integration_id: integration.id,
          event_id: accepted.id,
          event_type: "promotion.created",
          status: "succeeded",
          attempts: 1,
          last_status_code: 200,
          attempt_log: [expect.objectContaining({ attempt: 1, status_code: 200, error: null })],
        }),
      ]);
    });
  });

  it("deployment transitions reach the receiver, each signed, with the deployment record", async () => {
    const { project } = await newProject();
    const bucket = unique("deploy");
    const integration = await integrate(project.id, hook(bucket), {
      deployments_in_progress: true,
      deployments_succeeded: true,
    });
    const stack = await createStack(project.default_environment_id);
    const deployment = await internalOk<{ id: string }>(
      "POST",
      `/environments/${project.default_environment_id}/deployments`,
      { stack_ids: [stack.id], data: { patch: [] } },
    );
    await internalOk("PATCH", `/deployments/${deployment.id}`, { status: "in_progress" });
    await internalOk("PATCH", `/deployments/${deployment.id}`, { status: "succeeded" });

    await eventually(async () => {
      const requests = await received(bucket);
      expect(requests).toHaveLength(2);
      const payloads = requests.map(
        (r) => new Webhook(integration.signing_secret).verify(r.body, r.headers) as Record<string, unknown>,
      );
      expect(payloads.map((p) => p.type).sort()).toEqual(["deployment.in_progress", "deployment.succeeded"]);
      for (const payload of payloads) {
        expect(payload.data).toMatchObject({ project_id: project.id, deployment: { id: deployment.id } });
      }
      expect(new Set(requests.map((r) => r.headers["webhook-id"])).size).toBe(2);
    });
  });
});
