/**
 * Delivery: one attempt as a delivery lane makes it (src/delivery-lane/object.ts), what it records, and
 * when the lane tries again; the dead-letter consumer ends it. The lane itself: ./lanes.test.ts.
 */
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newId } from "../../../src/lib/ids";
import { attemptDelivery, NETWORK_ERROR } from "../../../src/webhooks/deliver";
import { RETRY_DELAYS_SECONDS } from "../../../src/webhooks/retry";
import { createOwnedProject, unique } from "../../helpers/factories";
import { sleep } from "../../helpers/wait";
import {
  allowTheLocalReceiver,
  attemptOnce,
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

describe("delivery", () => {
  async function pendingDelivery(url: string, type: "webhook" | "slack" = "webhook") {
    const { project } = await createOwnedProject();
    const integration = await integrate(project.id, url, { services_in_alarm: true }, type);
    const event = await writeEvent(project.id, "service.in_alarm", { service: "api", reason: "5xx" });
    const deliveryId = await writeDelivery(project.id, event.id, integration.id);
    return { project, integration, event, deliveryId };
  }
  const retryAt = (delaySeconds: number) => ({
    action: "retry",
    delaySeconds,
    at: expect.any(Number),
    // The outcome's session's bookmark: where the retry's first read starts.
    bookmark: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/),
  });

  it("POSTs a Standard Webhooks request that the standardwebhooks package verifies, and is done", async () => {
    const bucket = unique("ok");
    const { integration, event, deliveryId, project } = await pendingDelivery(hook(bucket));
    expect(await attemptOnce(deliveryId)).toEqual({ action: "ack", reason: "delivered" });

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

    // Idempotent: the same delivery attempted again sends nothing.
    expect(await attemptOnce(deliveryId, 2)).toEqual({ action: "ack", reason: "delivery already succeeded" });
    expect(await received(bucket)).toHaveLength(1);
  });

  it("retries a failing endpoint after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then dead-letters and marks it failed", async () => {
    const bucket = unique("fail");
    const { deliveryId, event } = await pendingDelivery(hook(bucket, "?status=500"));
    for (let attempt = 1; attempt <= 7; attempt++) {
      const decision = await attemptOnce(deliveryId, attempt);
      const delaySeconds = RETRY_DELAYS_SECONDS[attempt - 1];
      // After the 7th try the lane hands the delivery to the dead-letter queue.
      expect(decision).toEqual(
        delaySeconds === undefined ? { action: "dead-letter" } : retryAt(delaySeconds),
      );
      // The lane tries again at the very instant the record names.
      const row = await deliveryRow(deliveryId);
      if (decision.action === "retry") expect(row?.nextAttemptAt).toBe(new Date(decision.at).toISOString());
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

    const dead = await runBatch(
      [{ body: { kind: "webhook.deliver", delivery_id: deliveryId }, attempts: 1 }],
      { queue: "deploy-platform-events-dlq" },
    );
    expect(dead.result.explicitAcks).toEqual(dead.ids);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "failed", nextAttemptAt: null });

    // A late attempt does not send a failed delivery again.
    expect(await attemptOnce(deliveryId, 3)).toEqual({ action: "ack", reason: "delivery already failed" });
    expect(await received(bucket)).toHaveLength(7);
  });

  it("honours Retry-After, up to 12 h", async () => {
    const a = await pendingDelivery(hook(unique("ra"), "?status=503&retry_after=600"));
    const b = await pendingDelivery(hook(unique("rb"), "?status=429&retry_after=999999"));
    expect(await attemptOnce(a.deliveryId)).toEqual(retryAt(600));
    expect(await attemptOnce(b.deliveryId)).toEqual(retryAt(43200));
  });

  it("does not follow a redirect: a 3xx is a failed attempt", async () => {
    const bucket = unique("redirect");
    const { deliveryId } = await pendingDelivery(hook(bucket, "?status=302"));
    expect(await attemptOnce(deliveryId)).toEqual(retryAt(5));
    expect(await received(`${bucket}-redirected`)).toEqual([]);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "pending", lastStatusCode: 302 });
  });

  it("a network error is a failed attempt with its reason recorded", async () => {
    // Port 9 (discard) has no listener here: the connection is refused.
    const { deliveryId } = await pendingDelivery("http://127.0.0.1:9/hook");
    expect(await attemptOnce(deliveryId)).toEqual(retryAt(5));
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
    expect(await attemptOnce(deliveryId, 1, { env: strict })).toEqual(retryAt(5));
    expect(await received(bucket)).toEqual([]);
    const [attempt] = await attemptRows(deliveryId);
    expect(attempt?.error).toMatch(/^URL refused: Must be an https:\/\/ URL/);
  });

  it("sends a Slack integration a one-line { text }", async () => {
    const bucket = unique("slack");
    const { deliveryId, project } = await pendingDelivery(hook(bucket), "slack");
    await attemptOnce(deliveryId);
    const [req] = await received(bucket);
    expect(JSON.parse(req?.body ?? "{}")).toEqual({
      text: `:rotating_light: api is in alarm: 5xx (project \`${project.id}\`)`,
    });
  });

  it("is done with a delivery that no longer exists", async () => {
    expect(await attemptOnce(newId())).toEqual({
      action: "ack",
      reason: "delivery gone (project or integration deleted)",
    });
  });

  it("records nothing, and is done, when the delivery is deleted while its request is out", async () => {
    // The receiver answers after 400 ms; meanwhile the event (and so the delivery) is deleted,
    // as deleting its project or integration would.
    const { event, deliveryId } = await pendingDelivery(hook(unique("slow"), "?delay_ms=400"));
    const pending = attemptOnce(deliveryId);
    await sleep(100);
    await env.DB.prepare("DELETE FROM events WHERE id = ?").bind(event.id).run();
    expect(await pending).toEqual({ action: "ack", reason: "delivery gone or superseded meanwhile" });
    expect(await attemptRows(deliveryId)).toEqual([]);
  });

  it("records no attempt, and is done, when a newer series took the delivery while its request was out", async () => {
    const { deliveryId } = await pendingDelivery(hook(unique("slow"), "?delay_ms=400"));
    const pending = attemptOnce(deliveryId);
    await sleep(100);
    // What a redeliver does to the row: a new series (its lane sends it again).
    await env.DB.prepare("UPDATE webhook_deliveries SET series = series + 1 WHERE id = ?")
      .bind(deliveryId)
      .run();
    expect(await pending).toEqual({ action: "ack", reason: "delivery gone or superseded meanwhile" });
    expect(await attemptRows(deliveryId)).toEqual([]);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "pending", attempts: 0, series: 1 });
  });
});
