/**
 * The webhook operations of API_CONTRACT §13 in the Workers runtime: real D1, the real EVENTS
 * queue delivering by itself, real HTTP to the local receiver (test/global-setup-receiver.ts).
 * An integration's enabled state: disabled by hand (updateIntegration), by a 410 Gone, by 5 days of
 * failures; what a disabled integration records.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { notificationIntegrations } from "../../../src/db/schema";
import { request } from "../../helpers/api";
import { unique } from "../../helpers/factories";
import { emit, type Integration, runDeadLetter, setupIntegration } from "../../helpers/integrations";
import { captureLogs } from "../../helpers/logs";
import {
  allowTheLocalReceiver,
  DAY_MS,
  db,
  deliveriesOfEvent,
  deliveryRow,
  eventually,
  hook,
  integrationRow,
  received,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

// The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
allowTheLocalReceiver();

describe("enabled / disabled", () => {
  // Disabling an integration is logged as a warning by design; these tests cause it on purpose.
  captureLogs("warn");
  it("a receiver answering 410 Gone disables the integration at once; later events are skipped", async () => {
    const { project, integration, bucket } = await setupIntegration({ changelog: true }, "?status=410");
    const first = await emit(project.id);
    await eventually(async () => {
      expect(await integrationRow(integration.id)).toMatchObject({ enabled: false, disabledReason: "gone" });
      expect(await deliveriesOfEvent(first.id)).toEqual([
        expect.objectContaining({ status: "failed", attempts: 1 }),
      ]);
    });
    // The record changed, so did its update time: the time it was disabled.
    const row = await integrationRow(integration.id);
    expect(row?.updatedAt).toBe(row?.disabledAt);
    expect(row?.updatedAt).not.toBe(integration.updated_at);
    const second = await emit(project.id);
    await eventually(async () => {
      expect((await deliveriesOfEvent(second.id)).map((d) => d.status)).toEqual(["skipped"]);
    });
    expect(await received(bucket)).toHaveLength(1);
  });

  it("a 410 from a url the integration no longer has (changed while the attempt was out) disables nothing; the new url gets the next event", async () => {
    // The old url answers 410 a second and a half after each request arrives.
    const { owner, project, integration, bucket, path } = await setupIntegration(
      { changelog: true },
      "?status=410&delay_ms=1500",
    );
    const first = await emit(project.id);
    await eventually(async () => {
      expect(await received(bucket)).toHaveLength(1);
    });
    const next = unique("ops");
    const moved = await request<Integration>("PATCH", path, { key: owner.key, body: { url: hook(next) } });
    expect(moved.status, moved.raw).toBe(200);
    await eventually(async () => {
      expect(await deliveriesOfEvent(first.id)).toEqual([
        expect.objectContaining({ status: "failed", attempts: 1, lastStatusCode: 410 }),
      ]);
    });
    expect(await integrationRow(integration.id)).toMatchObject({ enabled: true, disabledReason: null });
    const second = await emit(project.id);
    await eventually(async () => {
      expect((await deliveriesOfEvent(second.id)).map((d) => d.status)).toEqual(["succeeded"]);
    });
    expect(await received(next)).toHaveLength(1);
  });

  it("5 days of nothing but failures (3 failed deliveries) disables it as failing; less does not", async () => {
    const cases = [
      { since: 6, failedBefore: 2, disabled: true },
      { since: 4, failedBefore: 2, disabled: false }, // the run is not 5 days old
      { since: 6, failedBefore: 1, disabled: false }, // only 2 failed deliveries in the run
    ];
    for (const c of cases) {
      const { project, integration } = await setupIntegration();
      const start = new Date(Date.now() - c.since * DAY_MS).toISOString();
      await db
        .update(notificationIntegrations)
        .set({ failingSince: start })
        .where(eq(notificationIntegrations.id, integration.id))
        .run();
      for (let i = 0; i < c.failedBefore; i++) {
        const event = await writeEvent(project.id, "changelog.created", {}, (c.since - 1) * DAY_MS);
        await writeDelivery(project.id, event.id, integration.id, {
          status: "failed",
          at: new Date(Date.now() - (c.since - 1 - i * 0.1) * DAY_MS).toISOString(),
        });
      }
      const event = await writeEvent(project.id, "changelog.created");
      const last = await writeDelivery(project.id, event.id, integration.id, {
        status: "pending",
        attempts: 7,
      });
      await runDeadLetter(last);
      expect((await deliveryRow(last))?.status).toBe("failed");
      const row = await integrationRow(integration.id);
      expect({ enabled: row?.enabled, reason: row?.disabledReason }, JSON.stringify(c)).toEqual(
        c.disabled ? { enabled: false, reason: "failing" } : { enabled: true, reason: null },
      );
      // Disabled: the update time is the time it was disabled; not disabled: untouched.
      expect(row?.updatedAt, JSON.stringify(c)).toBe(c.disabled ? row?.disabledAt : integration.updated_at);
    }
  });

  it("a success ends the run of failures, and re-enabling clears it", async () => {
    const { owner, project, integration, path } = await setupIntegration();
    const start = new Date(Date.now() - 6 * DAY_MS).toISOString();
    await db
      .update(notificationIntegrations)
      .set({ failingSince: start })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    await emit(project.id);
    await eventually(async () => {
      expect((await integrationRow(integration.id))?.failingSince).toBeNull();
    });
    await db
      .update(notificationIntegrations)
      .set({ failingSince: start, enabled: false, disabledReason: "failing", disabledAt: start })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    const on = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    expect((await integrationRow(integration.id))?.failingSince).toBeNull();
  });
});
