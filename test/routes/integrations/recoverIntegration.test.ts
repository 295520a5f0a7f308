/**
 * The webhook operations of API_CONTRACT §13 in the Workers runtime: real D1, the real EVENTS
 * queue and delivery lanes delivering by themselves, real HTTP to the local receiver (test/global-setup-receiver.ts).
 * POST …/{integration_id}/recover (recoverIntegration): skipped and failed deliveries of a
 * disabled integration, sent later with their original webhook-id; deliveries left pending.
 */
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { RECOVER_CHUNK } from "../../../src/services/integrations/redelivery";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { emit, type Integration, setupIntegration } from "../../helpers/integrations";
import { captureLogs } from "../../helpers/logs";
import { runCommonRouteTests } from "../../helpers/security";
import { sleep } from "../../helpers/wait";
import {
  allowTheLocalReceiver,
  bulkFailedDeliveries,
  DAY_MS,
  deliveriesOfEvent,
  deliveryRow,
  eventually,
  received,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

// The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
allowTheLocalReceiver();

/** Recover what an integration's events of the last hour left behind. */
const recoverLastHour = (key: string, path: string) =>
  request<{ queued: number }>("POST", `${path}/recover`, {
    key,
    body: { since: new Date(Date.now() - 3600_000).toISOString() },
  });

describe("POST …/{integration_id}/recover", () => {
  // Disabling an integration is logged as a warning by design; these tests cause it on purpose.
  captureLogs("warn");
  it("a disabled integration records events as skipped; recover sends them later with their original webhook-id", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    const off = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, disabled_reason: "manual" });
    expect(off.body.disabled_at).toMatch(/Z$/);

    const { id: eventId } = await emit(project.id);
    await eventually(async () => {
      expect((await deliveriesOfEvent(eventId)).map((d) => d.status)).toEqual(["skipped"]);
    });
    const on = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    // Neither disabling nor re-enabling sent anything.
    expect(await received(bucket)).toEqual([]);

    const res = await recoverLastHour(owner.key, path);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ queued: 1 });
    await eventually(async () => {
      const [req] = await received(bucket);
      expect(req?.headers["webhook-id"]).toBe(eventId);
      new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {});
    });
    await eventually(async () => {
      expect((await deliveriesOfEvent(eventId)).map((d) => d.status)).toEqual(["succeeded"]);
    });
    // Nothing left to recover.
    const again = await recoverLastHour(owner.key, path);
    expect(again.body).toEqual({ queued: 0 });
  });

  it("recover takes only failed and skipped deliveries whose event is in [since, until]", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    const at = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString();
    const make = async (daysAgo: number, status: "failed" | "skipped" | "succeeded" | "pending") => {
      const event = await writeEvent(project.id, "changelog.created", {}, daysAgo * DAY_MS);
      await writeDelivery(project.id, event.id, integration.id, { status, at: event.createdAt });
      return event.id;
    };
    const inRange = [await make(3, "failed"), await make(2, "skipped")];
    await make(2.5, "succeeded");
    await make(2.5, "pending");
    await make(5, "failed"); // before since
    await make(0.5, "skipped"); // after until
    const res = await request<{ queued: number }>("POST", `${path}/recover`, {
      key: owner.key,
      // Any RFC 3339 offset is read as the instant it names; `t` and `z` may be lower case.
      body: { since: at(4).replace("Z", "+00:00"), until: at(1).replace("T", "t").replace("Z", "z") },
    });
    expect(res.body).toEqual({ queued: 2 });
    await eventually(async () => {
      expect((await received(bucket)).map((r) => r.headers["webhook-id"]).sort()).toEqual(
        [...inRange].sort(),
      );
    });
  });

  it("recover also takes a delivery left pending past its time, in a new series, but not one still due", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    const make = async (nextAttemptInMs: number) => {
      const event = await writeEvent(project.id, "changelog.created", {}, 10 * 60_000);
      const id = await writeDelivery(project.id, event.id, integration.id, {
        at: event.createdAt,
        attempts: 1,
        nextAttemptAt: new Date(Date.now() + nextAttemptInMs).toISOString(),
      });
      return { eventId: event.id, id };
    };
    // Its retry was due five minutes ago and never came (its hand-over lost in a crash).
    const stuck = await make(-5 * 60_000);
    // Its retry is due in five minutes: on its way.
    const due = await make(5 * 60_000);
    const res = await recoverLastHour(owner.key, path);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ queued: 1 });
    await eventually(async () => {
      expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([stuck.eventId]);
      expect(await deliveryRow(stuck.id)).toMatchObject({ status: "succeeded", series: 1, attempts: 2 });
    });
    expect(await deliveryRow(due.id)).toMatchObject({ status: "pending", series: 0, attempts: 1 });
  });

  it("recover re-queues every delivery of the range in one call, past its 1,000-row steps", async () => {
    const { owner, project, integration, path } = await setupIntegration();
    const N = 2 * RECOVER_CHUNK + 3;
    const start = new Date(Date.now() - 3600_000).toISOString();
    // N failed deliveries of N events, two events per millisecond (ties broken by the event's ID).
    const bulk = await bulkFailedDeliveries(project.id, integration.id, N, start);
    const failed = () =>
      env.DB.prepare(
        "SELECT count(*) AS n FROM webhook_deliveries WHERE integration_id = ? AND status = 'failed'",
      )
        .bind(integration.id)
        .first<number>("n");
    expect(await failed()).toBe(N);
    const res = await request<{ queued: number }>("POST", `${path}/recover`, {
      key: owner.key,
      body: { since: start },
    });
    expect(res.status, res.raw).toBe(202);
    expect(res.body).toEqual({ queued: N });
    expect(await failed()).toBe(0);
    // One audit entry for the call.
    const entries = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'recoverIntegration' AND target_id = ?",
    )
      .bind(integration.id)
      .first<number>("n");
    expect(entries).toBe(1);
    // The lane need not send them all: it is emptied, and a delivery that is gone is dropped.
    await bulk.forget();
  });

  it("recover refuses a bad range or body and changes nothing", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    // A failed delivery that every range below would take, were it read as a range.
    const event = await writeEvent(project.id, "changelog.created", {}, 3600_000);
    const failed = await writeDelivery(project.id, event.id, integration.id, {
      status: "failed",
      at: event.createdAt,
    });
    const before = await deliveryRow(failed);
    expect(before).toMatchObject({ status: "failed" });
    const since = new Date(Date.now() - 2 * DAY_MS).toISOString();
    const until = new Date(Date.now() - 3 * DAY_MS).toISOString();
    for (const body of [{}, { since: "yesterday" }, { since, until }, { since, extra: true }]) {
      const res = await request<ErrorBody>("POST", `${path}/recover`, { key: owner.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("bad_input");
    }
    // Still failed, as it was; nothing sent, nothing recorded.
    expect(await deliveryRow(failed)).toEqual(before);
    const entries = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'recoverIntegration' AND target_id = ?",
    )
      .bind(integration.id)
      .first<number>("n");
    expect(entries).toBe(0);
    await sleep(300);
    expect(await received(bucket)).toEqual([]);
    // The same delivery, with a good body: what the refusals left it for.
    const ok = await request<{ queued: number }>("POST", `${path}/recover`, {
      key: owner.key,
      body: { since },
    });
    expect(ok.body).toEqual({ queued: 1 });
  });
  runCommonRouteTests("POST recover", async () => {
    const { owner, path } = await setupIntegration();
    return {
      method: "POST",
      path: `${path}/recover`,
      body: { since: "2026-11-01T00:00:00Z" },
      caller: owner,
    };
  });
});
