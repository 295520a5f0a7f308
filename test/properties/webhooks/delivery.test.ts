/** Delivery: one attempt per message, retried on the schedule, dead-lettered at the end. */
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newId } from "../../../src/lib/ids";
import { attemptDelivery, NETWORK_ERROR } from "../../../src/webhooks/deliver";
import { RETRY_DELAYS_SECONDS } from "../../../src/webhooks/retry";
import { createOwnedProject, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import {
  allowTheLocalReceiver,
  attemptRows,
  deliveryRow,
  hook,
  integrate,
  received,
  runBatch,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

allowTheLocalReceiver();
// A failed attempt is logged as a warning by design; these tests fail attempts on purpose.
const warnings = captureLogs("warn");

describe("delivery", () => {
  async function pendingDelivery(url: string, type: "webhook" | "slack" = "webhook") {
    const { project } = await createOwnedProject();
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
    expect(warnings.lines()).toContainEqual(
      expect.objectContaining({
        msg: "webhook delivery failed",
        delivery_id: deliveryId,
        action: "dead-letter",
      }),
    );
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
    // The class of failure, not the runtime's message about the refused connection.
    expect(attempt?.error).toBe(NETWORK_ERROR);
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

  it("acks, recording nothing, when the delivery is deleted while its request is out", async () => {
    // The receiver answers after 400 ms; meanwhile the event (and so the delivery) is deleted,
    // as deleting its project or integration would.
    const { event, deliveryId } = await pendingDelivery(hook(unique("slow"), "?delay_ms=400"));
    const pending = runBatch([deliver(deliveryId)]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await env.DB.prepare("DELETE FROM events WHERE id = ?").bind(event.id).run();
    const run = await pending;
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect(run.result.retryMessages).toEqual([]);
    expect(await attemptRows(deliveryId)).toEqual([]);
  });

  it("acks, recording no attempt, when a newer series took the delivery while its request was out", async () => {
    const { deliveryId } = await pendingDelivery(hook(unique("slow"), "?delay_ms=400"));
    const pending = runBatch([deliver(deliveryId)]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // What a redeliver does to the row: a new series (its own message would send it again).
    await env.DB.prepare("UPDATE webhook_deliveries SET series = series + 1 WHERE id = ?")
      .bind(deliveryId)
      .run();
    const run = await pending;
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect(await attemptRows(deliveryId)).toEqual([]);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "pending", attempts: 0, series: 1 });
  });
});
