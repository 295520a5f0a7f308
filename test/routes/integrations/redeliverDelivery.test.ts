/**
 * The webhook operations of API_CONTRACT §13 in the Workers runtime: real D1, the real EVENTS
 * queue delivering by itself, real HTTP to the local receiver (test/global-setup-receiver.ts).
 * POST …/deliveries/{delivery_id}/redeliver (redeliverDelivery): a new series for the same event.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { interceptStatements, request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import type { ErrorBody } from "../../helpers/expect";
import { unique } from "../../helpers/factories";
import { type Delivery, one, runDeadLetter, runMessage, setupIntegration } from "../../helpers/integrations";
import { captureLogs } from "../../helpers/logs";
import { runCommonRouteTests } from "../../helpers/security";
import {
  allowTheLocalReceiver,
  deliveryRow,
  eventually,
  hook,
  integrate,
  received,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

// The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
allowTheLocalReceiver();

describe("POST …/deliveries/{delivery_id}/redeliver", () => {
  // A superseded series' failed attempt is logged by design; these tests cause it on purpose.
  captureLogs("warn");
  it("a delivery whose status changes between its read and its move (an attempt ended): its entry's `from` is the status it left (§14)", async () => {
    const { owner, project, integration, path } = await setupIntegration();
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, {
      status: "failed",
      attempts: 1,
    });
    let raced = false;
    // Just before the batch that moves it, the lane records its attempt's success.
    const racing = interceptStatements({
      'update "webhook_deliveries" set "status"': async () => {
        if (raced) return;
        raced = true;
        await env.DB.prepare("UPDATE webhook_deliveries SET status = 'succeeded' WHERE id = ?")
          .bind(deliveryId)
          .run();
      },
    });
    const requestId = `redeliver-${crypto.randomUUID()}`;
    const res = await request<Delivery>("POST", `${path}/deliveries/${deliveryId}/redeliver`, {
      key: owner.key,
      headers: { "x-request-id": requestId },
      bindings: { DB: racing },
    });
    expect(res.status, res.raw).toBe(202);
    expect(raced).toBe(true);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(JSON.parse(String(rows[0]?.changes))).toEqual({ status: { from: "succeeded", to: "pending" } });
  });

  it("queues a new series for the same event, whatever its status, with the same webhook-id", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    for (const status of ["failed", "succeeded", "skipped"] as const) {
      const event = await writeEvent(project.id, "changelog.created", { n: status });
      const deliveryId = await writeDelivery(project.id, event.id, integration.id, { status, attempts: 1 });
      const res = await request<Delivery>("POST", `${path}/deliveries/${deliveryId}/redeliver`, {
        key: owner.key,
      });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ id: deliveryId, event_id: event.id, status: "pending", attempts: 1 });
      await eventually(async () => {
        const got = (await received(bucket)).filter((r) => r.headers["webhook-id"] === event.id);
        expect(got).toHaveLength(1);
        expect(await deliveryRow(deliveryId)).toMatchObject({ status: "succeeded", attempts: 2 });
      });
    }
  });

  it("supersedes the series still running: its retries and its dead letter change nothing", async () => {
    const { owner, project, bucket } = await setupIntegration();
    const failing = await integrate(project.id, hook(bucket, "?status=500"), {});
    const event = await writeEvent(project.id, "changelog.created");
    // Series 0 (the fan-out's) is still retrying.
    const deliveryId = await writeDelivery(project.id, event.id, failing.id, {
      status: "pending",
      attempts: 2,
    });
    const res = await request<Delivery>(
      "POST",
      `${one(project.id, failing.id)}/deliveries/${deliveryId}/redeliver`,
      { key: owner.key },
    );
    expect(res.status).toBe(202);
    await eventually(async () => expect((await deliveryRow(deliveryId))?.attempts).toBe(3));
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "pending", series: 1 });
    // Series 0's last try dead-letters: the delivery is not failed, the new series goes on.
    await runDeadLetter(deliveryId);
    expect((await deliveryRow(deliveryId))?.status).toBe("pending");
    // A retry of series 0 arrives: acknowledged, nothing sent.
    const stale = await runMessage(deliveryId, { series: 0 });
    expect(stale.explicitAcks).toHaveLength(1);
    expect(await received(bucket)).toHaveLength(1);
    expect((await deliveryRow(deliveryId))?.attempts).toBe(3);
    // Series 1's own dead letter ends it.
    await runDeadLetter(deliveryId, 1);
    expect((await deliveryRow(deliveryId))?.status).toBe("failed");
  });

  it("is 404 for a delivery of another integration, and 400 for a malformed id", async () => {
    const { owner, project, path } = await setupIntegration();
    const other = await integrate(project.id, hook(unique("other")), {});
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, other.id, { status: "failed" });
    const res = await request<ErrorBody>("POST", `${path}/deliveries/${deliveryId}/redeliver`, {
      key: owner.key,
    });
    expect(res.status).toBe(404);
    expect((await deliveryRow(deliveryId))?.status).toBe("failed");
    const bad = await request<ErrorBody>("POST", `${path}/deliveries/not-an-id!/redeliver`, {
      key: owner.key,
    });
    expect(bad.status).toBe(400);
  });

  runCommonRouteTests("POST redeliver", async () => {
    const { owner, project, integration, path } = await setupIntegration();
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, { status: "failed" });
    return { method: "POST", path: `${path}/deliveries/${deliveryId}/redeliver`, caller: owner };
  });
});
