/**
 * Delivery lanes (src/delivery-lane/object.ts): each integration's deliveries are attempted by a Durable
 * Object of its own, so a receiver that hangs holds up no other tenant; retries run when the
 * delivery record says; the last try goes to the dead-letter queue; and the cron's sweep hands
 * deliveries left pending past their time back to their lanes, never sending one twice. Through
 * the real queue, the real lanes and real HTTP to the local receiver.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { notificationIntegrations } from "../../../src/db/schema";
import { type DeliveryLane, MAX_IN_FLIGHT } from "../../../src/delivery-lane/object";
import { scheduleDeliveries } from "../../../src/services/integrations/lane-client";
import { MAX_ATTEMPTS } from "../../../src/webhooks/retry";
import { request } from "../../helpers/api";
import { serviceContext } from "../../helpers/context";
import { runCron } from "../../helpers/cron";
import { recordingD1 } from "../../helpers/d1-trips";
import { createOwnedProject, unique } from "../../helpers/factories";
import { emit } from "../../helpers/integrations";
import { captureLogs } from "../../helpers/logs";
import {
  allowTheLocalReceiver,
  attemptRows,
  db,
  deliveriesOfEvent,
  deliveryRow,
  eventually,
  hook,
  integrate,
  laneEntries,
  laneOf,
  received,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

allowTheLocalReceiver();
// Failed attempts and dead letters are logged by design; these tests cause them on purpose.
captureLogs("warn", "all");
// A dead letter the queue refuses is logged as an error, on purpose below.
captureLogs("error", "all");

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** Waits for `check` for at most `ms` (a few seconds: what "does not delay" allows). */
const within = (ms: number, check: () => Promise<void>) => vi.waitFor(check, { timeout: ms, interval: 50 });

describe("tenant isolation", () => {
  it("a receiver that hangs holds up only its own integration: another project's delivery, its retry and a disconnect go on within seconds", async () => {
    // Tenant A: a receiver that answers only after a minute (each attempt times out at 15 s),
    // and more deliveries than its lane makes at once.
    const a = await createOwnedProject();
    const hangs = unique("hangs");
    await integrate(a.project.id, hook(hangs, "?delay_ms=60000"), { changelog: true });
    await Promise.all(Array.from({ length: 12 }, () => emit(a.project.id)));
    await eventually(async () => expect((await received(hangs)).length).toBeGreaterThanOrEqual(10));

    // Tenant B: a healthy receiver and one that always fails.
    const b = await createOwnedProject();
    const ok = unique("ok");
    await integrate(b.project.id, hook(ok), { changelog: true });
    const failing = await integrate(b.project.id, hook(unique("fails"), "?status=500"), { changelog: true });
    const sent = Date.now();
    const event = await emit(b.project.id);
    await within(5000, async () =>
      expect((await received(ok)).map((r) => r.headers["webhook-id"])).toEqual([event.id]),
    );
    expect(Date.now() - sent).toBeLessThan(3000);

    const asked = Date.now();
    const disconnect = await request("PATCH", `/v1/projects/${b.project.id}/disconnect`, {
      key: b.owner.key,
    });
    expect(disconnect.status).toBe(204);
    await within(5000, async () => {
      const got = await request<{ connection_status: string }>("GET", `/v1/projects/${b.project.id}`, {
        key: b.owner.key,
      });
      expect(got.body.connection_status).toBe("disconnected");
    });
    expect(Date.now() - asked).toBeLessThan(3000);

    // The failing receiver's retry starts when its delivery record says it is due ("about 5 s").
    const delivery = (await deliveriesOfEvent(event.id)).find((d) => d.integrationId === failing.id);
    await within(15_000, async () => expect(await attemptRows(delivery?.id ?? "")).toHaveLength(2));
    const [first, second] = await attemptRows(delivery?.id ?? "");
    const due = Date.parse(first?.nextAttemptAt ?? "");
    expect(due - Date.parse(first?.createdAt ?? "")).toBe(5000);
    const startedAt = Date.parse(second?.createdAt ?? "") - (second?.durationMs ?? 0);
    expect(startedAt - due).toBeGreaterThanOrEqual(-50);
    expect(startedAt - due).toBeLessThan(1000);
  });
});

describe("a lane", () => {
  it("takes a delivery once per series: handed over again it is not sent twice; a newer series replaces the older", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("once");
    const integration = await integrate(project.id, hook(bucket, "?delay_ms=300"), {});
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, { nextAttemptAt: ago(0) });
    const ctx = serviceContext();
    const entry = { deliveryId, series: 0, manual: false };
    const [taken, again] = await Promise.all([
      scheduleDeliveries(ctx, integration.id, [entry]),
      scheduleDeliveries(ctx, integration.id, [entry]),
    ]);
    expect(taken + again).toBe(1);
    await eventually(async () =>
      expect(await deliveryRow(deliveryId)).toMatchObject({ status: "succeeded" }),
    );
    expect(await received(bucket)).toHaveLength(1);
    // Done with, the lane keeps nothing: not even its table.
    await eventually(async () =>
      expect(
        await runInDurableObject(laneOf(integration.id), (_lane: DeliveryLane, state) =>
          state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE name = 'lane'").one(),
        ),
      ).toEqual({ n: 0 }),
    );

    // A redeliver's new series: taken, and sent once more.
    await env.DB.prepare("UPDATE webhook_deliveries SET status = 'pending', series = 1 WHERE id = ?")
      .bind(deliveryId)
      .run();
    expect(await scheduleDeliveries(ctx, integration.id, [{ ...entry, series: 1, manual: true }])).toBe(1);
    await eventually(async () => expect(await received(bucket)).toHaveLength(2));
  });

  it("after the last try hands the delivery to the dead-letter queue, whose consumer records it failed", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("last");
    const integration = await integrate(project.id, hook(bucket, "?status=500"), {});
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, { nextAttemptAt: ago(0) });
    // Six tries of this series already failed: the next is the last.
    await runInDurableObject(laneOf(integration.id), (lane: DeliveryLane, state) => {
      lane.schedule([{ deliveryId, series: 0, manual: false }]);
      state.storage.sql.exec("UPDATE lane SET tries = ? WHERE delivery_id = ?", MAX_ATTEMPTS - 1, deliveryId);
    });
    await eventually(async () =>
      expect(await deliveryRow(deliveryId)).toMatchObject({ status: "failed", nextAttemptAt: null }),
    );
    expect(await received(bucket)).toHaveLength(1);
    expect(await laneEntries(integration.id)).toEqual([]);
  });
  it("records the last try failed itself: a dead letter the queue never takes leaves no delivery pending", async () => {
    const { project } = await createOwnedProject();
    const integration = await integrate(project.id, hook(unique("no-dlq"), "?status=500"), {});
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, { nextAttemptAt: ago(0) });
    const refused = vi.fn(async () => {
      throw new Error("queue unavailable");
    });
    await runInDurableObject(laneOf(integration.id), (lane: DeliveryLane, state) => {
      const own = lane as unknown as { env: Env };
      own.env = { ...own.env, EVENTS_DLQ: { ...own.env.EVENTS_DLQ, send: refused } };
      lane.schedule([{ deliveryId, series: 0, manual: false }]);
      state.storage.sql.exec("UPDATE lane SET tries = ? WHERE delivery_id = ?", MAX_ATTEMPTS - 1, deliveryId);
    });
    await eventually(async () => {
      expect(refused).toHaveBeenCalled();
      expect(await deliveryRow(deliveryId)).toMatchObject({ status: "failed", nextAttemptAt: null });
    });
    // The lane keeps the entry to hand the dead letter over later.
    expect(await laneEntries(integration.id)).toEqual([expect.objectContaining({ deliveryId })]);
    await runInDurableObject(laneOf(integration.id), (lane: DeliveryLane) => {
      (lane as unknown as { env: Env }).env = env;
    });
  });

  it("skips a disabled integration's backlog together, a few statements for 250 deliveries; an operator's series is still sent, a superseded one is left alone", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("disabled");
    const integration = await integrate(project.id, hook(bucket), {});
    await db
      .update(notificationIntegrations)
      .set({ enabled: false })
      .where(eq(notificationIntegrations.id, integration.id));
    // 250 pending deliveries of 250 events, as a fan-out left them before the integration was disabled.
    const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
    await env.DB.batch([
      env.DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250)
         INSERT INTO events (id, project_id, type, data, enqueued_at, created_at)
         SELECT printf('%s%014d', ?1, i), ?2, 'changelog.created', '{}', ?3, ?3 FROM n`,
      ).bind(tag, project.id, new Date().toISOString()),
      env.DB.prepare(
        `INSERT INTO webhook_deliveries (id, project_id, event_id, integration_id, status, attempts, created_at, updated_at)
         SELECT 'd' || id, project_id, id, ?2, 'pending', 0, created_at, created_at FROM events WHERE id LIKE ?1 || '%'`,
      ).bind(tag, integration.id),
    ]);
    const ids = Array.from({ length: 250 }, (_, i) => `d${tag}${String(i + 1).padStart(14, "0")}`);
    // One an operator asked for (series 1: sent while disabled), one whose row a newer series took.
    const [manual, superseded] = ids.slice(-2) as [string, string];
    await env.DB.prepare("UPDATE webhook_deliveries SET series = 1 WHERE id IN (?, ?)")
      .bind(manual, superseded)
      .run();
    const entries = ids.map((deliveryId) => ({
      deliveryId,
      series: deliveryId === manual ? 1 : 0,
      manual: deliveryId === manual,
    }));

    const recording = recordingD1();
    await runInDurableObject(laneOf(integration.id), (lane: DeliveryLane) => {
      (lane as unknown as { env: Env }).env = recording.env;
      lane.schedule(entries);
    });
    await eventually(async () => expect(await laneEntries(integration.id)).toEqual([]));
    await runInDurableObject(laneOf(integration.id), (lane: DeliveryLane) => {
      (lane as unknown as { env: Env }).env = env;
    });

    const statuses = await env.DB.prepare(
      "SELECT status, count(*) AS n FROM webhook_deliveries WHERE integration_id = ? GROUP BY status ORDER BY status",
    )
      .bind(integration.id)
      .all<{ status: string; n: number }>();
    expect(statuses.results).toEqual([
      { status: "pending", n: 1 },
      { status: "skipped", n: 248 },
      { status: "succeeded", n: 1 },
    ]);
    expect(await deliveryRow(superseded)).toMatchObject({ status: "pending", series: 1 });
    expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([manual.slice(1)]);
    // One attempt each would be 2 round trips each (≥ 496); the first attempts, made at once before
    // one of them finds the integration disabled, go one by one, the rest 100 to a statement.
    expect(recording.trips.length).toBeLessThan(2 * MAX_IN_FLIGHT + 3 + 6);
  });

  it("is woken by a hand-over of what it holds when its alarm gave up (its retries spent)", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("woken");
    const integration = await integrate(project.id, hook(bucket), {});
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, { nextAttemptAt: ago(0) });
    const entry = { deliveryId, series: 0, manual: false };
    await runInDurableObject(laneOf(integration.id), async (lane: DeliveryLane, state) => {
      lane.schedule([entry]);
      // What the platform leaves once an alarm has failed every retry: entries, no alarm.
      await state.storage.deleteAlarm();
      (lane as unknown as { alarmAt: number | null }).alarmAt = null;
    });
    expect(await scheduleDeliveries(serviceContext(), integration.id, [entry])).toBe(0);
    await eventually(async () => {
      expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([event.id]);
      expect(await deliveryRow(deliveryId)).toMatchObject({ status: "succeeded" });
    });
  });
});

describe("the sweep of deliveries left pending", () => {
  it("hands a delivery pending past its time back to its lane, which sends it; one its lane holds is not sent twice", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("stuck");
    const integration = await integrate(project.id, hook(bucket), {});
    const write = async (nextAttemptAt: string) => {
      const event = await writeEvent(project.id, "changelog.created");
      return { event, id: await writeDelivery(project.id, event.id, integration.id, { nextAttemptAt }) };
    };
    // In no lane (its hand-over was lost in a crash); late but held by its lane (due in 10 min:
    // its lane is behind a slow receiver); due a moment ago (its lane may be starting it).
    const lost = await write(ago(2 * 60_000));
    const held = await write(ago(2 * 60_000));
    const fresh = await write(ago(10_000));
    await runInDurableObject(laneOf(integration.id), (lane: DeliveryLane, state) => {
      lane.schedule([{ deliveryId: held.id, series: 0, manual: false }]);
      state.storage.sql.exec(
        "UPDATE lane SET due_at = ? WHERE delivery_id = ?",
        Date.now() + 600_000,
        held.id,
      );
    });

    await runCron();
    await eventually(async () => {
      expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([lost.event.id]);
      expect(await deliveryRow(lost.id)).toMatchObject({ status: "succeeded", attempts: 1 });
    });
    expect(await laneEntries(integration.id)).toEqual([
      expect.objectContaining({ deliveryId: held.id, series: 0, tries: 0 }),
    ]);
    expect(await deliveryRow(fresh.id)).toMatchObject({ status: "pending", attempts: 0 });
  });
});
